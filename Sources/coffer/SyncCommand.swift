import ArgumentParser
@_spi(Backend) import Coffer
import CofferSync
import Foundation

extension CofferCommand {
  /// `coffer sync LOCAL REMOTE [--follow]`: two stores kept in step.
  struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract:
        "Sync two stores: push the local store's changes, pull the remote one's (any backend to any backend).",
      discussion: """
        Each store keeps its sync state in entities named coffer.sync.*, so a sync that is interrupted goes on \
        where it stopped. Rows changed on both sides merge per field, the later change winning. Both stores \
        must hold the same fields for every entity they share. A line is printed per message; with --follow \
        the command syncs again after every commit on either side until it is stopped.
        """)

    @Argument(help: ArgumentHelp("The local store.", valueName: "LOCAL"))
    var local: String

    @Argument(
      help: ArgumentHelp("The store to sync with; created when it does not exist.", valueName: "REMOTE"))
    var remote: String

    @Flag(name: .long, help: "Keep syncing after every commit on either side until stopped.")
    var follow = false

    @Flag(
      name: .long,
      help: ArgumentHelp(
        "Give rows a store holds before it first syncs one implicit genesis stamp instead of a sync state each.",
        discussion:
          "An empty store then takes the other's rows in bulk. The first change of such a row stamps all its "
          + "fields. Applies to each store the first time it syncs."))
    var implicitGenesis = false

    @Option(
      name: .long,
      help: ArgumentHelp(
        "Most rows per page when a store takes the other's rows in bulk (a page also holds at most about 16 MiB).",
        valueName: "N"))
    var batchSize = 50_000

    func validate() throws {
      guard batchSize > 0 else { throw ValidationError("--batch-size must be at least 1.") }
    }

    @OptionGroup var observing: ObservingOptions

    func run() async throws {
      let here = try await StoreArgument.openExisting(local, role: "local store", logger: observing.logger)
      let there = try await StoreArgument.open(remote, role: "remote store", logger: observing.logger)
      let genesis: SyncReplica.Genesis = implicitGenesis ? .implicit : .stamped
      var synchronizer = Synchronizer(
        local: SyncReplica(store: here, genesis: genesis), remote: SyncReplica(store: there, genesis: genesis)
      )
      synchronizer.bootstrapPageSize = batchSize
      let started = ContinuousClock.now
      let progress: @Sendable (Synchronizer.Progress) -> Void = { step in
        Terminal.say(
          "\(step.pushing ? "push" : "pull"): \(step.states) row state\(step.states == 1 ? "" : "s") sent; "
            + "so far \(step.report.pushedRows) row\(step.report.pushedRows == 1 ? "" : "s") changed there, "
            + "\(step.report.pulledRows) here")
      }
      do {
        if follow {
          try await synchronizer.follow(progress: progress) { report in
            if report.pushedRows + report.pulledRows > 0 { Terminal.say(Self.summary(report, since: nil)) }
          }
        } else {
          let report = try await synchronizer.sync(progress: progress)
          Terminal.say(Self.summary(report, since: started))
        }
        try await here.close()
        try await there.close()
      } catch {
        throw Terminal.failure(error, while: "syncing '\(here.backend.name)' with '\(there.backend.name)'")
      }
    }

    static func summary(_ report: Synchronizer.Report, since start: ContinuousClock.Instant?) -> String {
      var line =
        "Synced: \(report.pushedRows) row\(report.pushedRows == 1 ? "" : "s") changed on the remote store, "
        + "\(report.pulledRows) on the local store"
      if let start {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        line += " in " + String(format: "%.1f", seconds) + " s"
      }
      return line + "."
    }
  }
}
