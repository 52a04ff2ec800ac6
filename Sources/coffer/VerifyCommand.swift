import ArgumentParser
@_spi(Backend) import Coffer
import CofferTools
import Foundation

extension CofferCommand {
  /// `coffer verify URL`: the store's own integrity.
  struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Check a store's integrity; exit non-zero with a report when anything is wrong.",
      discussion: """
        The backend checks its own structures (SQLite's integrity_check, a walk of LMDB's indexes, PostgreSQL's \
        constraints), then every row of every entity is read and checked against its schema, ids, unique \
        indexes and indexes. The store is only read. Progress goes to standard error: a bar on a terminal, or \
        JSON lines with --progress json.
        """)

    @Argument(help: ArgumentHelp("The store to check.", valueName: "URL"))
    var url: String

    @OptionGroup var observing: ObservingOptions

    func run() async throws {
      let store = try await StoreArgument.openExisting(url, role: "store", logger: observing.logger)
      let report: VerifyReport
      let display = observing.progressDisplay()
      do {
        report = try await store.verify { display.show(CommandProgress("verify", $0)) }
        display.finish()
        try await store.close()
      } catch {
        display.finish()
        throw Terminal.failure(error, while: "verifying the store '\(store.backend.name)'")
      }
      for entity in report.entities {
        Terminal.say(
          "\(entity.entity): \(entity.rows) row\(entity.rows == 1 ? "" : "s") read, "
            + "\(entity.indexesChecked) index\(entity.indexesChecked == 1 ? "" : "es") compared")
      }
      if report.isClean {
        Terminal.say("\(report.store): no problems found.")
        return
      }
      for problem in report.problems { Terminal.say("problem: \(problem)") }
      Terminal.say(
        "\(report.store): \(report.problems.count) problem\(report.problems.count == 1 ? "" : "s") found.")
      throw ExitCode(2)
    }
  }
}
