import ArgumentParser
@_spi(Backend) import Coffer
import CofferStores
import Foundation
import Logging
import Synchronization

#if Server
  import CofferServer
  import CoreMetrics
  import Hummingbird
  import Prometheus
  import ServiceLifecycle
#endif

extension CofferCommand {
  /// The commands this build has beyond the ones every build has: `serve` with the `Server` trait.
  static var optionalSubcommands: [any ParsableCommand.Type] {
    #if Server
      [Serve.self]
    #else
      []
    #endif
  }
}

#if Server
  extension CofferCommand {
    /// `coffer serve STORE --listen HOST:PORT [--tokens FILE]`: the store behind the JSON HTTP API.
    struct Serve: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        abstract: "Serve a store over HTTP: the JSON API a coffer+http:// store and any HTTP client use.",
        discussion: """
          Every request needs a bearer token from --tokens FILE or the COFFER_SERVER_TOKENS environment \
          variable: a JSON array of {"token": "...", "scopes": ["read", "write", "admin"], "entities": [...]} \
          objects (entities optional). --no-auth serves without tokens, on a loopback address only. The API \
          is described at /openapi.json. SIGTERM or SIGINT stops the server gracefully: batches in flight \
          finish, change streams end. Put TLS in front with a reverse proxy (see the Server article).

          --otlp-endpoint URL, or the standard OTEL_EXPORTER_OTLP_* environment variables, export each \
          request and the store calls and SQL statements it made as spans over OTLP/HTTP (see the \
          Observability article); off by default.

          --scratch BACKEND: serves scratch stores by name instead of one store: each first path component \
          (/NAME/v1/...) opens a new store of that backend in a temporary folder, removed when the server \
          stops. That is what `coffer conformance coffer+http://HOST:PORT` needs.
          """)

      @Argument(help: ArgumentHelp("The store to serve (created when missing).", valueName: "STORE"))
      var url: String?

      @Option(
        help: ArgumentHelp(
          "Serve scratch stores of this backend by name, in a temporary folder removed at exit (for tests).",
          valueName: "BACKEND:"))
      var scratch: String?

      @Option(help: ArgumentHelp("The address and port to listen on.", valueName: "HOST:PORT"))
      var listen = "127.0.0.1:8080"

      @Option(help: ArgumentHelp("A JSON file of bearer tokens and their scopes.", valueName: "FILE"))
      var tokens: String?

      @Flag(help: "Accept requests without a token (loopback addresses only).")
      var noAuth = false

      @Option(help: "The most rows one answer holds.")
      var maxRows = 100_000

      @Option(help: "The largest request body, in bytes.")
      var maxBodyBytes = 64 << 20

      @Flag(
        help:
          "Serve the browser viewer at /ui too: its login page takes a token of --tokens (see `coffer ui`).")
      var ui = false

      @Flag(
        help: """
          Serve metrics at /metrics in Prometheus' text format, without a token: the store's calls, \
          batches and connection pool, and every request by route. Keep /metrics off the public side of \
          a reverse proxy.
          """)
      var metrics = false

      @Option(
        help: ArgumentHelp(
          "Export traces over OTLP/HTTP to the collector at this base URL (its /v1/traces), e.g. "
            + "http://127.0.0.1:4318. The standard OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_* variables configure "
            + "the export too; without either, nothing is traced.", valueName: "URL"))
      var otlpEndpoint: String?

      @OptionGroup var logging: LoggingOptions

      func run() async throws {
        let (host, port) = try Self.address(listen)
        var configuration = CofferServer.Configuration(
          host: host, port: port, maxBodyBytes: maxBodyBytes, maxRows: maxRows)
        if metrics { Self.serveMetrics(&configuration) }
        // Before any store opens: a store takes the tracer in force when it is made.
        var exporters: [any Service] = []
        if Self.exportsTraces(endpoint: otlpEndpoint, environment: ProcessInfo.processInfo.environment) {
          do {
            exporters.append(try Self.bootstrapTracing(endpoint: otlpEndpoint))
          } catch {
            throw Terminal.failure(error, while: "setting up the OTLP trace export")
          }
          configuration.requestTracing = true
        }
        configuration.tokens = try loadTokens(host: host)
        configuration.onListening = { port in
          FileHandle.standardError.write(Data("coffer serve: listening on http://\(host):\(port)\n".utf8))
        }
        // The server logs its notices unasked; its stores log only with --log-level.
        let logger = logging.logger(label: "coffer.serve", defaultLevel: .notice)
        if ui && scratch != nil { throw ValidationError("--ui serves one STORE, not --scratch stores.") }
        if let scratch {
          try await serveScratch(scratch, configuration: configuration, logger: logger, alongside: exporters)
          return
        }
        guard let url else { throw ValidationError("Give the STORE to serve, or --scratch BACKEND:.") }
        if ui {
          configuration.viewer = CofferServer.Viewer()
          configuration.onListening = { port in
            FileHandle.standardError.write(
              Data(
                "coffer serve: listening on http://\(host):\(port) (the viewer: http://\(host):\(port)/ui)\n"
                  .utf8))
          }
        }
        let store = try await StoreArgument.open(url, role: "store", logger: logging.logger)
        let server = CofferServer(store: store, configuration: configuration, logger: logger)
        do {
          try await server.runUntilTerminated(alongside: exporters)
          try await store.close()
        } catch {
          try? await store.close()
          throw Terminal.failure(error, while: "serving '\(StoreArgument.redacted(url))'")
        }
      }

      /// Bootstraps a Prometheus registry as the process's metrics backend and serves it at
      /// `/metrics`, with every request counted by route.
      static func serveMetrics(_ configuration: inout CofferServer.Configuration) {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        configuration.requestMetrics = true
        configuration.additionalRoutes.append { router in
          router.get("metrics") { _, _ in
            var buffer: [UInt8] = []
            registry.emit(into: &buffer)
            return Response(
              status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
              body: ResponseBody(byteBuffer: ByteBuffer(bytes: buffer)))
          }
        }
      }

      func validate() throws {
        if url != nil && scratch != nil {
          throw ValidationError("Give a STORE or --scratch BACKEND:, not both.")
        }
      }

      /// Serves scratch stores of `backing`'s backend by name, each made the way the conformance
      /// suite makes its own, in a temporary folder that is removed (with the stores) at exit.
      private func serveScratch(
        _ backing: String, configuration: CofferServer.Configuration, logger: Logger,
        alongside exporters: [any Service]
      ) async throws {
        let registry = BackendRegistry.builtIn
        let base: StoreURL
        let entry: BackendRegistry.Entry
        do {
          base = try StoreURL(backing)
          entry = try registry.entry(for: base)
        } catch {
          throw Terminal.failure(
            error, while: "choosing the scratch backend '\(StoreArgument.redacted(backing))'")
        }
        let folder = FileManager.default.temporaryDirectory
          .appendingPathComponent("coffer-serve-scratch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let opened = ScratchStores()
        let server = CofferServer(
          stores: .named { name in
            let directory = (folder as NSString).appendingPathComponent(name)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let url = entry.scratchURL(base, directory, name)
            let store = try await Store.open(url: url.description, registry: registry, logger: logging.logger)
            opened.add(store, url)
            return store
          },
          configuration: configuration, logger: logger)
        var failure: (any Error)?
        do {
          try await server.runUntilTerminated(alongside: exporters)
        } catch {
          failure = error
        }
        for (store, url) in opened.all() {
          try? await store.close()
          await entry.removeScratch?(url)
        }
        try? FileManager.default.removeItem(atPath: folder)
        if let failure {
          throw Terminal.failure(failure, while: "serving scratch stores of '\(base.scheme):'")
        }
      }

      private func loadTokens(host: String) throws -> [CofferServer.Token]? {
        if let tokens {
          return try CofferServer.tokens(fromFile: tokens)
        }
        if let json = ProcessInfo.processInfo.environment["COFFER_SERVER_TOKENS"] {
          return try CofferServer.tokens(fromJSON: Data(json.utf8), source: "COFFER_SERVER_TOKENS")
        }
        guard noAuth else {
          throw ValidationError(
            "Give --tokens FILE or COFFER_SERVER_TOKENS, or --no-auth to serve a loopback address without tokens."
          )
        }
        guard ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) || host.hasPrefix("127.") else {
          throw ValidationError("--no-auth serves loopback addresses only; give tokens to listen on \(host).")
        }
        return nil
      }

      /// The scratch stores a `--scratch` server opened, to close and remove at exit.
      final class ScratchStores: Sendable {
        private let stores = Mutex<[(Store, StoreURL)]>([])
        func add(_ store: Store, _ url: StoreURL) { stores.withLock { $0.append((store, url)) } }
        func all() -> [(Store, StoreURL)] { stores.withLock { $0 } }
      }

      static func address(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
          (0...65535).contains(port)
        else {
          throw ValidationError("'\(text)' is not HOST:PORT (for example 127.0.0.1:8080).")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host.isEmpty ? "0.0.0.0" : host, port)
      }
    }
  }
#endif
