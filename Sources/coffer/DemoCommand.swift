import ArgumentParser
@_spi(Backend) import Coffer
import CofferChatExample
import CofferConfiguration
import CofferStores
import Foundation

extension CofferCommand {
  /// `coffer demo`: runs the chat example against a store and says what it does.
  struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Run the chat example against a store, step by step.",
      discussion: """
        The store is the first of: --store; the COFFER_STORE environment variable; coffer.store \
        in the configuration file (--config, or the file COFFER_CONFIG names; JSON or YAML); \
        else sqlite:coffer-demo.sqlite, an SQLite database in the current directory.
        """)

    /// The store used when nothing names one: an embedded SQLite database in the current directory.
    static let defaultStore = "sqlite:coffer-demo.sqlite"

    @Option(name: .long, help: ArgumentHelp("The store URL to use, e.g. memory:.", valueName: "URL"))
    var store: String?

    @Option(
      name: .long,
      help: ArgumentHelp("A JSON or YAML file whose coffer.store names the store.", valueName: "FILE"))
    var config: String?

    @OptionGroup var logging: LoggingOptions

    func run() async throws {
      let (url, source) = try await chooseStore()
      let opened: Store
      do {
        opened = try await Store.open(url: url, registry: .builtIn, logger: logging.logger)
      } catch {
        throw Terminal.failure(
          error, while: "opening the store '\(StoreArgument.redacted(url))' (from \(source.explanation))")
      }
      describe(url: url, source: source, backend: opened.backend)
      do {
        try await ChatDemo(chat: ChatService(store: opened), say: { Terminal.say($0) }).run()
        try await GraphDemo(store: opened, say: { Terminal.say($0) }).run()
        try await opened.close()
      } catch {
        throw Terminal.failure(error, while: "the demo")
      }
      Terminal.say("Done.")
    }

    /// The URL and its source; a malformed URL's message also lists the schemes this build has.
    private func chooseStore() async throws -> (url: String, source: StoreURLSource) {
      do {
        return try await StoreLocator(configFile: config).resolve(
          explicit: store, fallback: Self.defaultStore)
      } catch var error as CofferError {
        if error.code == .invalidURL {
          let schemes = BackendRegistry.builtIn.schemes.map { $0 + ":" }.joined(separator: ", ")
          error.message += " Supported schemes: \(schemes)."
        }
        throw Terminal.failure(error, while: "choosing the store")
      }
    }

    private func describe(url: String, source: StoreURLSource, backend: any StorageBackend) {
      Terminal.say("Coffer demo: the chat example (Examples/Chat) on one store")
      Terminal.say("Store: \(backend.name)")
      Terminal.say("  chosen by \(source.explanation)")
      let capabilities = backend.capabilities.names
      Terminal.say(
        "  capabilities: \(capabilities.isEmpty ? "none declared" : capabilities.joined(separator: ", "))")
      if backend.capabilities.contains(.durable) {
        Terminal.say(
          "  durable: the data stays after the demo; a second run first removes this run's threads.")
      } else if (try? StoreURL(url))?.scheme == "memory" {
        Terminal.say("  in memory: the data is not kept after the demo ends.")
      }
      if source == .fallback {
        Terminal.say(
          "  (the default: an SQLite database in the current directory; name another with --store)")
      }
      Terminal.say()
    }
  }
}
