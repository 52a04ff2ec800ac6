import ArgumentParser
@_spi(Backend) import Coffer
import CofferSync
import CofferWire
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
        must hold the same fields for every entity they share. Progress goes to standard error, a message at a \
        time: a bar on a terminal, or JSON lines with --progress json (entity is push or pull, rowsDone the rows \
        changed on either side so far). With --follow the command syncs again after every commit on either side \
        until it is stopped.
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

    @Option(
      name: .long,
      help: ArgumentHelp(
        "Keep only these rows in the local store: ENTITY for all its rows, or ENTITY=FILTER with a filter in "
          + "the JSON of the HTTP API. Repeat for more.",
        discussion:
          "For example Notebook='{\"compare\":{\"field\":\"owner\",\"op\":\"==\",\"value\":{\"string\":\"ann\"}}}'. "
          + "Rows outside leave the local store (they are not deleted on the remote one); local writes outside are "
          + "sent, then leave. Giving other subscriptions than the last sync's pulls the rows newly covered.",
        valueName: "ENTITY[=FILTER]"))
    var subscribe: [String] = []

    @Flag(
      name: .long,
      help: ArgumentHelp(
        "Let the server of a coffer+http(s):// REMOTE run its side of sync, within its token's scopes.",
        discussion:
          "The server's own replica then stamps and merges, and the token decides what this store sees and sends: "
          + "with a token limited to some entities, subscribe to those (--subscribe); a token without the write "
          + "scope pulls but cannot push."))
    var serverReplica = false

    func validate() throws {
      guard batchSize > 0 else { throw ValidationError("--batch-size must be at least 1.") }
      if implicitGenesis && !subscribe.isEmpty {
        throw ValidationError(
          "--subscribe keeps a sync state of every local row: leave out --implicit-genesis.")
      }
      _ = try Self.subscriptions(subscribe)
    }

    /// The subscriptions `--subscribe` gives, `nil` for none.
    static func subscriptions(_ arguments: [String]) throws -> [SyncSubscription]? {
      if arguments.isEmpty { return nil }
      return try arguments.map { argument in
        guard let equals = argument.firstIndex(of: "=") else { return SyncSubscription(argument) }
        let entity = String(argument[..<equals])
        let json = Data(argument[argument.index(after: equals)...].utf8)
        guard !entity.isEmpty, let wire = try? JSONDecoder().decode(WireFilter.self, from: json) else {
          throw ValidationError(
            "--subscribe \(entity.isEmpty ? "(no entity)" : entity)=…: the filter is not a filter in the JSON of the "
              + "HTTP API, such as {\"compare\":{\"field\":\"owner\",\"op\":\"==\",\"value\":{\"string\":\"ann\"}}}."
          )
        }
        return SyncSubscription(entity, where: wire.filter)
      }
    }

    @OptionGroup var observing: ObservingOptions

    func run() async throws {
      let here = try await StoreArgument.openExisting(local, role: "local store", logger: observing.logger)
      let there = try await StoreArgument.open(remote, role: "remote store", logger: observing.logger)
      let genesis: SyncReplica.Genesis = implicitGenesis ? .implicit : .stamped
      var synchronizer = Synchronizer(
        local: SyncReplica(store: here, genesis: genesis, subscriptions: try Self.subscriptions(subscribe)),
        remote: serverReplica ? try SyncReplica(servedBy: there) : SyncReplica(store: there, genesis: genesis)
      )
      synchronizer.bootstrapPageSize = batchSize
      let started = ContinuousClock.now
      let display = observing.progressDisplay()
      let progress: @Sendable (Synchronizer.Progress) -> Void = { step in
        display.show(
          CommandProgress(
            command: "sync", entity: step.pushing ? "push" : "pull",
            rowsDone: step.report.pushedRows + step.report.pulledRows, elapsed: ContinuousClock.now - started)
        )
      }
      do {
        if follow {
          try await synchronizer.follow(progress: progress) { report in
            display.finish()
            if report.pushedRows + report.pulledRows > 0 { Terminal.say(Self.summary(report, since: nil)) }
          }
        } else {
          let report = try await synchronizer.sync(progress: progress)
          display.finish()
          Terminal.say(Self.summary(report, since: started))
        }
        try await here.close()
        try await there.close()
      } catch {
        display.finish()
        throw Terminal.failure(error, while: "syncing '\(here.backend.name)' with '\(there.backend.name)'")
      }
    }

    static func summary(_ report: Synchronizer.Report, since start: ContinuousClock.Instant?) -> String {
      var line =
        "Synced: \(report.pushedRows) row\(report.pushedRows == 1 ? "" : "s") changed on the remote store, "
        + "\(report.pulledRows) on the local store"
      if let start {
        line += " in " + String(format: "%.1f", (ContinuousClock.now - start).seconds) + " s"
      }
      return line + "."
    }
  }
}
