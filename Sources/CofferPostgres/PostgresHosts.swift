@_spi(Backend) import Coffer

/// The servers a store's URL names, and the one that last accepted a connection for writes: new
/// connections try it first, so a store keeps to one primary until it fails, and error messages
/// name the server the store is using.
final class PostgresHosts: Sendable {
  /// The servers, in the URL's order; never empty.
  let all: [PostgresBackend.Configuration.Host]
  /// The index in ``all`` of the server that accepted the last connection.
  private let preferred = LockedState(0)

  /// The configuration's servers; its first server when the list is empty (the backend refuses
  /// such a configuration before it connects).
  init(_ configuration: PostgresBackend.Configuration) {
    all =
      configuration.hosts.isEmpty
      ? [PostgresBackend.Configuration.Host(configuration.host, port: configuration.port)]
      : configuration.hosts
  }

  /// Whether the store has several servers to choose from.
  var areSeveral: Bool { all.count > 1 }

  /// The server the store is using (the one that accepted the last connection, or the first).
  var current: PostgresBackend.Configuration.Host { all[preferred.withLock { $0 }] }

  /// The indexes of the servers in the order to try them: the preferred one, then the others in
  /// the URL's order.
  func order() -> [Int] {
    let first = preferred.withLock { $0 }
    return [first] + all.indices.filter { $0 != first }
  }

  /// Records that the server at `index` accepted a connection; returns whether that changed
  /// the preferred server.
  func prefer(_ index: Int) -> Bool {
    preferred.withLock { preferred in
      defer { preferred = index }
      return preferred != index
    }
  }
}
