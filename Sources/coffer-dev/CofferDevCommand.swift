import ArgumentParser
@_spi(Backend) import Coffer
import CofferStores

/// `coffer-dev`: the harness commands Coffer's own tests and reliability runs start — a soak of a
/// store, a stream of commits to kill in the middle. Apart from `coffer`, so that the tool a user
/// runs holds only what a user runs; built with the package, never a product.
@main
struct CofferDevCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "coffer-dev",
    abstract: "Test harness for Coffer's own tests and reliability runs (not a user tool; see `coffer`).",
    discussion: "Store URLs this build opens: \(BackendRegistry.builtIn.forms.joined(separator: ", ")).",
    subcommands: [Soak.self, Churn.self])
}
