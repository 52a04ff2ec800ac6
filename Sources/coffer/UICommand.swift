import ArgumentParser
import Coffer
import Foundation
import Logging

#if Server
  import CofferServer
#endif

extension CofferCommand {
  /// The viewer's command with the `Server` trait: `coffer ui`.
  static var viewerSubcommands: [any ParsableCommand.Type] {
    #if Server
      [UI.self]
    #else
      []
    #endif
  }
}

#if Server
  extension CofferCommand {
    /// `coffer ui STORE`: the browser viewer of one store, on a loopback address, logged in by
    /// a one-time link.
    struct UI: AsyncParsableCommand {
      static let configuration = CommandConfiguration(
        commandName: "ui",
        abstract: "See and edit a store in a browser: prints a one-time link to a viewer on this machine.",
        discussion: """
          Serves the viewer (and the JSON API it uses) on a loopback address and prints a link holding a \
          one-time token. Opening the link logs the browser in with a session cookie and takes the token out \
          of the address; the link works once. The viewer can change data unless --read-only is given. Ctrl-C \
          stops it. To serve the viewer to other machines, use `coffer serve STORE --ui --tokens FILE`.
          """)

      @Argument(help: ArgumentHelp("The store to open (created when missing).", valueName: "STORE"))
      var url: String

      @Option(
        help: ArgumentHelp(
          "The loopback address and port to listen on; port 0 picks a free one.", valueName: "HOST:PORT"))
      var listen = "127.0.0.1:0"

      @Flag(help: "Let the viewer read only: nothing on the page can change data.")
      var readOnly = false

      @OptionGroup var logging: LoggingOptions

      func run() async throws {
        let (host, port) = try Serve.address(listen)
        guard ["127.0.0.1", "localhost", "::1"].contains(host) || host.hasPrefix("127.") else {
          throw ValidationError(
            "coffer ui listens on a loopback address only; use coffer serve --ui --tokens FILE for \(host).")
        }
        let secret = CofferServer.Viewer.randomSecret()
        var configuration = CofferServer.Configuration(host: host, port: port)
        // No bearer token opens the API: only the session the one-time link makes.
        configuration.tokens = []
        configuration.viewer = CofferServer.Viewer(
          oneTimeToken: secret, oneTimeScopes: readOnly ? [.read] : [.read, .write])
        let shown = host.contains(":") ? "[\(host)]" : host
        configuration.onListening = { port in
          let text =
            "coffer ui: open http://\(shown):\(port)/ui/login?token=\(secret)\n"
            + "(the link works once; Ctrl-C stops the viewer)\n"
          FileHandle.standardOutput.write(Data(text.utf8))
        }
        // The viewer logs its notices unasked; its store logs only with --log-level.
        let logger = logging.logger(label: "coffer.ui", defaultLevel: .notice)
        let store = try await StoreArgument.open(url, role: "store", logger: logging.logger)
        let server = CofferServer(store: store, configuration: configuration, logger: logger)
        do {
          try await server.runUntilTerminated()
          try await store.close()
        } catch {
          try? await store.close()
          throw Terminal.failure(error, while: "serving the viewer of '\(StoreArgument.redacted(url))'")
        }
      }
    }
  }
#endif
