import ArgumentParser
@_spi(Backend) import Coffer
import CofferStores

/// `coffer`: the command-line tool of the Coffer package.
@main
struct CofferCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "coffer",
    abstract: "Keep app models in interchangeable stores, chosen by a store URL.",
    discussion: "Store URLs this build opens: \(BackendRegistry.builtIn.forms.joined(separator: ", ")).",
    subcommands: [
      Demo.self, Inspect.self, Copy.self, Export.self, Import.self, Verify.self, Migrate.self, Changes.self,
      Conformance.self, ConformanceChild.self, Sync.self,
    ] + optionalSubcommands + viewerSubcommands)
}
