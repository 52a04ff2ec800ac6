import ArgumentParser
import Coffer
import CofferConformance
import CofferStores
import Foundation

extension CofferCommand {
  /// `coffer conformance`: runs the conformance suite against stores and prints a table.
  struct Conformance: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Run the conformance suite against one or more store URLs.",
      discussion: """
        Every check makes its own scratch stores from each URL (keeping its options) in a \
        temporary folder that is removed afterwards. Exits non-zero if any check fails.
        """)

    @Argument(help: ArgumentHelp("Store URLs to check, e.g. memory:.", valueName: "URL"))
    var urls: [String] = []

    @Flag(name: .long, help: "Print every check as Markdown (the text of Docs/Conformance.md) and exit.")
    var list = false

    @Option(
      name: .long, help: ArgumentHelp("Run only checks whose id contains this text.", valueName: "SUBSTRING"))
    var filter: String?

    @OptionGroup var logging: LoggingOptions

    func validate() throws {
      if !list && urls.isEmpty {
        throw ValidationError(
          "Name at least one store URL, e.g. 'coffer conformance memory:', or pass --list.")
      }
    }

    func run() async throws {
      if list {
        Terminal.say(ConformanceSuite.markdownList(), terminator: "")
        return
      }
      let checks = ConformanceSuite.checks.filter { check in filter.map { check.id.contains($0) } ?? true }
      guard !checks.isEmpty else {
        Terminal.complain(
          "coffer: no check id contains '\(filter ?? "")'. 'coffer conformance --list' shows them.")
        throw ExitCode.failure
      }
      let scratch = FileManager.default.temporaryDirectory
        .appendingPathComponent("coffer-conformance-\(UUID().uuidString)").path
      defer { try? FileManager.default.removeItem(atPath: scratch) }

      var targets: [ConformanceTarget] = []
      for (number, url) in urls.enumerated() {
        do {
          let directory = (scratch as NSString).appendingPathComponent("store-\(number + 1)")
          // This executable is also the second process of the multi-process checks, logging as
          // this one does (into the check's log of the child).
          let child = Bundle.main.executablePath.map { path in
            var child = ConformanceTarget.ChildProgram.coffer(at: path)
            child.arguments += logging.arguments
            return child
          }
          var target = try await ConformanceTarget(
            url: url, registry: .builtIn, directory: directory, child: child)
          target.logger = logging.logger
          targets.append(target)
        } catch {
          throw Terminal.failure(
            error, while: "preparing the store '\(StoreArgument.redacted(url))' for the conformance suite")
        }
      }
      var results: [[ConformanceResult]] = []
      for target in targets { results.append(await ConformanceSuite.run(on: target, checks: checks)) }

      let report = ConformanceReport(checks: checks, stores: targets.map(\.name), results: results)
      Terminal.say(report.rendered(), terminator: "")
      if report.failed > 0 { throw ExitCode.failure }
    }
  }
}
