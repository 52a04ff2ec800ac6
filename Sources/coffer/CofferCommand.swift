import ArgumentParser

/// `coffer`: the command-line tool of the Coffer package.
@main
struct CofferCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "coffer",
    abstract: "Keep app models in interchangeable stores, chosen by a store URL.",
    discussion: """
      Store URLs: memory: (a fresh in-memory store), memory:NAME (shared in this process). \
      plist:, sqlite:, lmdb: and postgres: stores are planned.
      """,
    subcommands: [Demo.self, Conformance.self])
}
