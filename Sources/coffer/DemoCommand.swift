import ArgumentParser
import Coffer
import CofferChatExample
import CofferStores
import Foundation

extension CofferCommand {
  /// `coffer demo`: runs the chat example against a store and says what it does.
  struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Run the chat example against a store, step by step.",
      discussion: """
        The store is the one --store names, else the COFFER_STORE environment variable's, \
        else memory: (in memory, nothing kept after the demo).
        """)

    @Option(name: .long, help: ArgumentHelp("The store URL to use, e.g. memory:.", valueName: "URL"))
    var store: String?

    func run() async throws {
      let choice = StoreChoice.resolve(option: store, environment: ProcessInfo.processInfo.environment)
      let opened: Store
      do {
        opened = try await Store.open(url: choice.url)
      } catch {
        throw Terminal.failure(error, while: "opening the store '\(choice.url)' (from \(choice.explanation))")
      }
      describe(choice, opened.backend)
      do {
        try await ChatDemo(chat: ChatService(store: opened), say: { Terminal.say($0) }).run()
        try await opened.close()
      } catch {
        throw Terminal.failure(error, while: "the demo")
      }
      Terminal.say("Done.")
    }

    private func describe(_ choice: StoreChoice, _ backend: any StorageBackend) {
      Terminal.say("Coffer demo: the chat example (Examples/Chat) on one store")
      Terminal.say("Store: \(backend.name)")
      Terminal.say("  chosen by \(choice.explanation)")
      let capabilities = backend.capabilities.names
      Terminal.say(
        "  capabilities: \(capabilities.isEmpty ? "none declared" : capabilities.joined(separator: ", "))")
      if (try? StoreURL(choice.url))?.scheme == "memory" {
        Terminal.say("  in memory: the data is not kept after the demo ends.")
      }
      if choice.source == .builtInDefault {
        Terminal.say("  (memory: is the default while it is the only backend; it becomes a file store")
        Terminal.say("  when the plist and SQLite backends land.)")
      }
      Terminal.say()
    }
  }
}
