import ArgumentParser
@_spi(Backend) import Coffer
import Foundation

extension CofferCommand {
  /// `coffer migrate URL --plan FILE [--dry-run]`: run (or rehearse) a plan of built-in steps.
  struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Run a migration plan on a store, or rehearse it on a copy with --dry-run.",
      discussion: """
        The plan is a JSON file of named built-in steps (renameEntity, renameField, changeKind, addField, \
        removeField, removeEntity, addIndex, dropIndex; see Docs/Migrations.md). Steps the store has recorded \
        are skipped; each other step runs in one transaction and is recorded with it. With --dry-run the plan \
        runs on a copy of the store in memory: each step's rows and the first failure are printed, and the \
        store is not changed. Without --plan, the steps the store has recorded are listed. Progress, a step \
        at a time, goes to standard error: a bar on a terminal, or JSON lines with --progress json.
        """)

    @Argument(help: ArgumentHelp("The store to migrate.", valueName: "URL"))
    var url: String

    @Option(help: ArgumentHelp("The plan, a JSON file.", valueName: "FILE"))
    var plan: String?

    @Flag(help: "Run the plan on a copy of the store in memory and report; change nothing.")
    var dryRun = false

    @OptionGroup var observing: ObservingOptions

    func run() async throws {
      let plan = try readPlan()
      let store = try await StoreArgument.openExisting(url, role: "store", logger: observing.logger)
      let name = store.backend.name
      do {
        guard let plan else {
          let record = try await store.migrations()
          try await store.close()
          if record.isEmpty { Terminal.say("\(name): no migration step recorded.") }
          for step in record {
            Terminal.say(
              "\(step.position) \(step.name): applied \(ISO8601DateFormatter().string(from: step.appliedAt)), \(step.rowsTouched) rows"
            )
          }
          return
        }
        let display = observing.progressDisplay()
        let progress: @Sendable (MigrationProgress) -> Void = { step in
          display.show(CommandProgress(step, elapsed: ContinuousClock.now - display.started))
        }
        let report: MigrationReport
        do {
          report =
            dryRun
            ? try await store.rehearseMigration(plan, progress: progress)
            : try await store.migrate(plan, progress: progress)
          display.finish()
        } catch {
          display.finish()
          throw error
        }
        try await store.close()
        Terminal.say(report.description)
        let verb = dryRun ? "would apply" : "applied"
        Terminal.say(
          "\(name): \(report.appliedCount) of \(plan.steps.count) step\(plan.steps.count == 1 ? "" : "s") \(verb)"
            + (report.succeeded ? "." : "; a step failed, see above."))
        if !report.succeeded { throw ExitCode(2) }
      } catch let exit as ExitCode {
        throw exit
      } catch {
        try? await store.close()
        throw Terminal.failure(
          error, while: dryRun ? "rehearsing the plan on '\(name)'" : "migrating '\(name)'")
      }
    }

    private func readPlan() throws -> MigrationPlan? {
      guard let plan else {
        if dryRun { throw ValidationError("--dry-run needs a plan: give it with --plan FILE.") }
        return nil
      }
      let data: Data
      do {
        data = try Data(contentsOf: URL(fileURLWithPath: plan))
      } catch {
        throw ValidationError("Cannot read the plan file '\(plan)': check the path and its permissions.")
      }
      do {
        return try MigrationPlan(json: data)
      } catch {
        throw Terminal.failure(error, while: "reading the plan '\(plan)'")
      }
    }
  }
}
