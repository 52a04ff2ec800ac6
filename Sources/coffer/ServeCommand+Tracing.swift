#if Server
  import Foundation
  import OTel
  import ServiceLifecycle
  import Tracing

  extension CofferCommand.Serve {
    /// Whether traces are exported: `--otlp-endpoint`, or one of the standard
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` and `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` variables, unless
    /// `OTEL_TRACES_EXPORTER=none` or `OTEL_SDK_DISABLED=true` turns them off.
    static func exportsTraces(endpoint: String?, environment: [String: String]) -> Bool {
      if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" { return false }
      if environment["OTEL_TRACES_EXPORTER"]?.lowercased() == "none" { return false }
      return endpoint != nil || environment["OTEL_EXPORTER_OTLP_ENDPOINT"] != nil
        || environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] != nil
    }

    /// Bootstraps swift-otel's tracer as the process's, exporting spans over OTLP/HTTP
    /// (protobuf) to `endpoint` (a base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` is: the spans go to
    /// its `/v1/traces`) or where the standard `OTEL_*` variables say; returns the exporter's
    /// service, which must run beside the server and stop after it so the last spans are sent.
    /// Only traces: the metrics stay with `--metrics`, the logs on standard error.
    static func bootstrapTracing(endpoint: String?) throws -> any Service {
      var configuration = OTel.Configuration.default
      configuration.serviceName = "coffer"
      configuration.metrics.enabled = false
      configuration.logs.enabled = false
      configuration.traces.enabled = true
      configuration.traces.exporter = .otlp
      configuration.traces.otlpExporter.protocol = .httpProtobuf
      if let endpoint {
        configuration.traces.otlpExporter.endpoint =
          endpoint.hasSuffix("/") ? endpoint + "v1/traces" : endpoint + "/v1/traces"
      }
      let backend = try OTel.makeTracingBackend(configuration: configuration)
      InstrumentationSystem.bootstrap(backend.factory)
      return backend.service
    }
  }
#endif
