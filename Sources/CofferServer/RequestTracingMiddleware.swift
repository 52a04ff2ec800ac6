import Hummingbird
import Tracing

/// A server span per request, under which the store calls it makes are traced: named
/// `"<method> <route>"` by the route's template (`POST /v1/apply`), with `http.request.method`,
/// `http.route` and `http.response.status_code` — never a path's values, a query or a header,
/// which can hold ids, tokens or one-time links. Added by ``CofferServer/Configuration/requestTracing``.
///
/// A request that carries a trace context (W3C `traceparent` and `tracestate`, or whatever the
/// bootstrapped tracer's propagator reads) continues that trace: its span is a child of the
/// caller's.
struct RequestTracingMiddleware<Context: RequestContext>: RouterMiddleware {
  // `@concurrent`, as Hummingbird's protocol declares it (this package builds with nonisolated
  // async functions running on their caller's actor by default).
  @concurrent func handle(
    _ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response
  ) async throws -> Response {
    let method = request.method.rawValue
    let tracer = InstrumentationSystem.tracer
    var parent = InstrumentationContext.current ?? .topLevel
    tracer.extract(request.headers, into: &parent, using: HeaderExtractor())
    let span = tracer.startSpan("HTTP \(method)", context: parent, ofKind: .server)
    defer { span.end() }
    span.attributes["http.request.method"] = method
    do {
      let response = try await InstrumentationContext.$current.withValue(span.context) {
        try await next(request, context)
      }
      finish(span, method: method, context: context, status: response.status.code)
      return response
    } catch {
      let status = (error as? any HTTPResponseError)?.status.code ?? 500
      finish(span, method: method, context: context, status: status)
      if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
      throw error
    }
  }

  private func finish(_ span: any Span, method: String, context: Context, status: Int) {
    if let route = context.endpointPath {
      span.operationName = "\(method) \(route)"
      span.attributes["http.route"] = route
    }
    span.attributes["http.response.status_code"] = status
    if status >= 500 { span.attributes["error.type"] = String(status) }
  }
}

/// Reads the trace context a caller propagated from a request's header fields.
struct HeaderExtractor: Extractor {
  func extract(key: String, from fields: HTTPFields) -> String? {
    let name = key.lowercased()
    return fields.first { $0.name.canonicalName == name }?.value
  }
}
