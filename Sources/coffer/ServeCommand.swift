import ArgumentParser
@_spi(Backend) import Coffer
import Foundation
import Logging

#if Server
  import CofferServer
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
          """)

      @Argument(help: ArgumentHelp("The store to serve (created when missing).", valueName: "STORE"))
      var url: String

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

      func run() async throws {
        let (host, port) = try Self.address(listen)
        var configuration = CofferServer.Configuration(
          host: host, port: port, maxBodyBytes: maxBodyBytes, maxRows: maxRows)
        configuration.tokens = try loadTokens(host: host)
        configuration.onListening = { port in
          FileHandle.standardError.write(Data("coffer serve: listening on http://\(host):\(port)\n".utf8))
        }
        var logger = Logger(label: "coffer.serve") { label in StreamLogHandler.standardError(label: label) }
        logger.logLevel = .notice
        let store = try await StoreArgument.open(url, role: "store")
        let server = CofferServer(store: store, configuration: configuration, logger: logger)
        do {
          try await server.runUntilTerminated()
          try await store.close()
        } catch {
          try? await store.close()
          throw Terminal.failure(error, while: "serving '\(StoreArgument.redacted(url))'")
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
