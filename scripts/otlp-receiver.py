"""A small OTLP/HTTP receiver for scripts/test-traces: decodes each POST to /v1/traces with the
OpenTelemetry project's own protobuf classes (PyPI's opentelemetry-proto) and appends one JSON
object a span to a file. Nothing of Coffer's reads or writes OTLP here but the exporter under
test.

    python otlp-receiver.py PORT_FILE SPANS_FILE

Listens on a free loopback port, writes that port to PORT_FILE, and serves until killed.
"""
import gzip
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

port_file, spans_file = sys.argv[1:3]


def attribute_value(value):
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        if self.path != "/v1/traces" or "protobuf" not in self.headers.get("Content-Type", ""):
            self.send_response(404)
            self.end_headers()
            return
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with open(spans_file, "a", encoding="utf-8") as out:
            for resource_spans in request.resource_spans:
                resource = {a.key: attribute_value(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        out.write(json.dumps({
                            "name": span.name,
                            "traceId": span.trace_id.hex(),
                            "spanId": span.span_id.hex(),
                            "parentSpanId": span.parent_span_id.hex(),
                            "kind": span.kind,
                            "start": span.start_time_unix_nano,
                            "end": span.end_time_unix_nano,
                            "attributes": {a.key: attribute_value(a.value) for a in span.attributes},
                            "links": [link.span_id.hex() for link in span.links],
                            "status": {"code": span.status.code, "message": span.status.message},
                            "events": [event.name for event in span.events],
                            "resource": resource,
                        }, sort_keys=True) + "\n")
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *arguments):
        pass


server = HTTPServer(("127.0.0.1", 0), Receiver)
with open(port_file + ".partial", "w", encoding="utf-8") as out:
    out.write(str(server.server_address[1]))
os.rename(port_file + ".partial", port_file)
server.serve_forever()
