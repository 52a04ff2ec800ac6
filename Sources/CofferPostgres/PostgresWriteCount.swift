@_spi(Backend) import Coffer

/// How many calls that may have written (anything but a read) have ended, counted together for
/// every store of this process whose URL names the same servers and database: reads spread over
/// standbys use it to know whether the primary's log position they last read covers every such
/// write (`PostgresStandbyReads`). So a store's reads see its own commits, and those of the
/// process's other handles on the same database, wherever they go.
enum PostgresWriteCount {
  /// The counters, by servers and database. A lock-guarded registry; it grows by one small
  /// counter for each set of servers and database the process opens.
  private static let counters = LockedState<[String: LockedState<Int>]>([:])

  /// The counter of the stores on `configuration`'s servers and database.
  static func counter(for configuration: PostgresBackend.Configuration) -> LockedState<Int> {
    let key =
      configuration.hosts.map(\.description).sorted().joined(separator: ",") + "/" + configuration.database
    return counters.withLock { counters in
      if let counter = counters[key] { return counter }
      let counter = LockedState(0)
      counters[key] = counter
      return counter
    }
  }
}
