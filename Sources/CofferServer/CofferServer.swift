public import Coffer
public import Hummingbird
import HummingbirdCore
public import Logging
public import ServiceLifecycle
import UnixSignals

/// Any ``Store`` behind a JSON HTTP API: what `coffer serve` runs, and what an app embeds to
/// serve its own store.
///
/// The API is the backend interface over HTTP — prepare, read, count, get by ids, aggregate,
/// apply a batch (all or nothing, with preconditions and an idempotency key), and the change
/// feed — so a `coffer+http://` store in another process is a backend like the others. The
/// routes and their JSON are in the OpenAPI document the server serves at `/openapi.json`, and
/// in the Server article.
///
/// `CofferServer` is a swift-service-lifecycle `Service`: run it in a `ServiceGroup`, and a
/// graceful shutdown lets batches in flight finish and ends change streams cleanly.
///
/// ```swift
/// let store = try await Store.open(url: "sqlite:///var/app/db.sqlite", registry: .builtIn)
/// let server = CofferServer(
///   store: store,
///   configuration: .init(host: "127.0.0.1", port: 8080, tokens: try CofferServer.tokens(fromFile: path)))
/// let group = ServiceGroup(services: [server], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public struct CofferServer: Service, Sendable {
  /// Where the server finds the stores it serves.
  public enum Stores: Sendable {
    /// One store, at `/v1/…`.
    case single(Store)
    /// Stores by name, at `/NAME/v1/…`: the closure opens the store a name stands for (or throws
    /// ``CofferError/Code/unknownEntity``-like errors it chooses). The server opens each name once
    /// and keeps it open while it runs.
    case named(@Sendable (String) async throws -> Store)
  }

  /// The server's settings, with safe defaults.
  public struct Configuration: Sendable {
    /// The address to listen on.
    public var host: String
    /// The port to listen on; 0 picks a free one (see ``onListening``).
    public var port: Int
    /// The bearer tokens the server accepts, or `nil` to accept every request without one (only
    /// for a loopback address in tests and tools).
    public var tokens: [Token]?
    /// The largest request body, in bytes (larger: 413).
    public var maxBodyBytes: Int
    /// The most rows one answer holds; a query that selects more must page.
    public var maxRows: Int
    /// How deeply a filter may nest, counting the comparison at the bottom as one level. The
    /// default, 101, is the 100 levels of and/or/not every Coffer store answers plus that
    /// comparison: any filter a local store takes goes over the wire.
    public var maxFilterDepth: Int
    /// The most open connections; more wait to be accepted.
    public var maxConnections: Int
    /// How long a connection may stay idle before the server closes it.
    public var idleTimeout: Duration
    /// How long a client may take to send a request's body.
    public var bodyTimeout: Duration
    /// How long a batch's idempotency key is remembered.
    public var idempotencyWindow: Duration
    /// Called with the port once the server listens.
    public var onListening: (@Sendable (Int) async -> Void)?
    /// Adds routes of the caller's to the server's router before it starts (a `/metrics`
    /// route, say). They get no authentication from the server.
    public var additionalRoutes: [@Sendable (Router<BasicRequestContext>) -> Void]
    /// The browser viewer at `/ui`, or `nil` (the default) to serve only the API. One store
    /// only (``Stores/single(_:)``).
    public var viewer: Viewer?
    /// Whether every request is counted and timed with swift-metrics, by route (`hb.requests`,
    /// `http.server.request.duration`, `hb.request.errors`, `http.server.active_requests`), with
    /// the route's template, the method and the status as dimensions — never a path's values.
    /// Off by default; it costs nothing to record until a metrics backend is bootstrapped.
    public var requestMetrics: Bool
    /// Whether every request is a server span (swift-distributed-tracing) named by its route's
    /// template (`POST /v1/apply`), with the store calls it makes as child spans; it records the
    /// method, the route and the status, never a path's values, a query or a header. Off by
    /// default; it costs nothing to record until a tracer is bootstrapped.
    public var requestTracing: Bool

    /// A configuration; every limit has a default.
    public init(
      host: String = "127.0.0.1", port: Int = 8080, tokens: [Token]? = nil, maxBodyBytes: Int = 64 << 20,
      maxRows: Int = 100_000, maxFilterDepth: Int = 101, maxConnections: Int = 1024,
      idleTimeout: Duration = .seconds(120), bodyTimeout: Duration = .seconds(60),
      idempotencyWindow: Duration = .seconds(24 * 3600), onListening: (@Sendable (Int) async -> Void)? = nil
    ) {
      self.host = host
      self.port = port
      self.tokens = tokens
      self.maxBodyBytes = maxBodyBytes
      self.maxRows = maxRows
      self.maxFilterDepth = maxFilterDepth
      self.maxConnections = maxConnections
      self.idleTimeout = idleTimeout
      self.bodyTimeout = bodyTimeout
      self.idempotencyWindow = idempotencyWindow
      self.onListening = onListening
      self.additionalRoutes = []
      self.viewer = nil
      self.requestMetrics = false
      self.requestTracing = false
    }
  }

  let state: ServerState
  let logger: Logger

  /// A server for the stores `stores` names.
  public init(stores: Stores, configuration: Configuration = Configuration(), logger: Logger? = nil) {
    let logger = logger ?? Logger(label: "coffer.server", factory: { _ in SwiftLogNoOpLogHandler() })
    self.logger = logger
    self.state = ServerState(stores: stores, configuration: configuration, logger: logger)
  }

  /// A server for one store, at `/v1/…`.
  public init(store: Store, configuration: Configuration = Configuration(), logger: Logger? = nil) {
    self.init(stores: .single(store), configuration: configuration, logger: logger)
  }

  /// Serves until the task is cancelled or a graceful shutdown is asked for: then stops
  /// accepting connections, lets requests in flight (batches among them) finish, and ends
  /// change streams. The stores stay open; closing them is the caller's.
  public func run() async throws {
    try await makeApplication().run()
  }

  /// The Hummingbird application that serves the routes (what ``run()`` runs; tests drive it
  /// without a socket).
  func makeApplication() -> some ApplicationProtocol {
    let configuration = state.configuration
    let router = Router(context: BasicRequestContext.self)
    // Before any route: a route takes the middleware added before it.
    if configuration.requestMetrics { router.add(middleware: MetricsMiddleware()) }
    if configuration.requestTracing { router.add(middleware: RequestTracingMiddleware()) }
    state.addRoutes(to: router)
    for add in configuration.additionalRoutes { add(router) }
    if let viewer = configuration.viewer, !state.isNamed { state.addViewerRoutes(viewer, to: router) }
    let onListening = configuration.onListening
    return Application(
      router: router,
      server: .http1(
        configuration: .init(idleTimeout: .nanoseconds(Int64(configuration.idleTimeout.nanoseconds)))),
      configuration: ApplicationConfiguration(
        address: .hostname(configuration.host, port: configuration.port), serverName: "coffer",
        availableConnectionsDelegate: MaximumAvailableConnections(configuration.maxConnections)),
      onServerRunning: { channel in await onListening?(channel.localAddress?.port ?? 0) },
      logger: logger)
  }
}

extension CofferServer {
  /// Runs the server in a service group that shuts down gracefully on SIGTERM or SIGINT: what
  /// `coffer serve` does. `others` run beside it and stop after it (a trace exporter that
  /// sends the spans of the last requests, say).
  public func runUntilTerminated(alongside others: [any Service] = []) async throws {
    let group = ServiceGroup(
      configuration: .init(
        services: others + [self], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
    try await group.run()
  }
}
