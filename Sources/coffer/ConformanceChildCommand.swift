import ArgumentParser
import Coffer
import CofferConformance
import CofferStores

extension CofferCommand {
  /// `coffer conformance-child URL FIRST COUNT`: the second process of the conformance suite's
  /// multi-process checks. Hidden: the suite starts it, people do not.
  struct ConformanceChild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "conformance-child",
      abstract: "Commit rows to a store as the second process of the multi-process conformance checks.",
      shouldDisplay: false)

    @Argument(help: ArgumentHelp("The store URL.", valueName: "URL"))
    var url: String

    @Argument(
      help: ArgumentHelp(
        "The first id to write, or `transfer` to move amounts between accounts.", valueName: "FIRST"))
    var first: String

    @Argument(
      help: ArgumentHelp(
        "How many rows to commit, one per commit (or transfers to make).", valueName: "COUNT"))
    var count: String

    @OptionGroup var logging: LoggingOptions

    func run() async throws {
      do {
        try await ConformanceSuite.runChild(
          arguments: [url, first, count], registry: .builtIn, logger: logging.logger)
      } catch {
        throw Terminal.failure(
          error, while: "writing to '\(StoreArgument.redacted(url))' as the conformance child")
      }
    }
  }
}
