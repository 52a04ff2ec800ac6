@_spi(Backend) import Coffer
@_spi(Backend) import CofferPostgres
import CofferTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

/// A row the standby tests write and read back.
struct StandbyItem: Storable, Equatable {
  var id: Int64
  var value: Int64
}

/// Reads spread over the standbys of a URL (`reads=standby|any`), against a primary and two
/// streaming standbys on loopback, each started by the package's scripts and removed afterwards.
@Suite("PostgreSQL reads on standbys", .timeLimit(.minutes(3)))
struct PostgresStandbyReadsTests {
  /// Gets `ids` again and again until `enough` says the servers' counts are what the test waits
  /// for, or `limit` passes; returns the counts by `host:port`. Every get must find its row.
  private func readUntil(
    _ store: Store, _ backend: PostgresBackend, ids: ClosedRange<Int64>,
    within limit: Duration = .seconds(20),
    _ enough: ([String: Int]) -> Bool
  ) async throws -> [String: Int] {
    let deadline = ContinuousClock.now + limit
    var id = ids.lowerBound
    while ContinuousClock.now < deadline {
      for _ in 0..<20 {
        let item = try await store.get(StandbyItem.self, id: id)
        #expect(item?.id == id)
        id = id == ids.upperBound ? ids.lowerBound : id + 1
      }
      if enough(backend.readsServed()) { break }
      try await Task.sleep(for: .milliseconds(5))
    }
    return backend.readsServed()
  }

  @Test("with reads=standby, gets land on both standbys and not on the primary once they have caught up")
  func readsLandOnStandbys() async throws {
    try await StandbyClusters.with([.init(), .init()]) { clusters in
      let backend = try await PostgresBackend(configuration: clusters.configuration("reads=standby"))
      let store = Store(backend: backend)
      try await store.insert((1...50).map { StandbyItem(id: $0, value: $0 * 10) })
      let standbys = Array(clusters.hosts.dropFirst())
      let served = try await readUntil(store, backend, ids: 1...50) { served in
        standbys.allSatisfy { served[$0, default: 0] >= 100 }
      }
      let before = served[clusters.hosts[0], default: 0]
      // Caught up and nothing written since: every read goes to a standby.
      _ = try await readUntil(store, backend, ids: 1...50, within: .milliseconds(200)) { _ in false }
      let after = backend.readsServed()
      let sessions = try await clusters.sessionsOnStandbys()
      try await store.close()
      print("Reads served with reads=standby: \(after)")
      for standby in standbys { #expect(served[standby, default: 0] >= 100, "\(served)") }
      #expect(after[clusters.hosts[0], default: 0] - before <= 1, "reads went to the primary: \(after)")
      #expect(sessions.allSatisfy { $0 >= 1 }, "sessions on the standbys: \(sessions)")
    }
  }

  @Test("with reads=any, gets spread over the primary and both standbys")
  func readsSpreadOverAll() async throws {
    try await StandbyClusters.with([.init(), .init()]) { clusters in
      let backend = try await PostgresBackend(configuration: clusters.configuration("reads=any"))
      let store = Store(backend: backend)
      try await store.insert((1...20).map { StandbyItem(id: $0, value: $0) })
      let served = try await readUntil(store, backend, ids: 1...20) { served in
        clusters.hosts.allSatisfy { served[$0, default: 0] >= 100 }
      }
      try await store.close()
      for host in clusters.hosts { #expect(served[host, default: 0] >= 100, "\(served)") }
    }
  }

  @Test(
    "read-your-writes: after each commit the store's own get and count see it, with an asynchronous standby behind"
  )
  func readYourWrites() async throws {
    // The second standby replays each commit 300 ms after the primary made it: a read there too
    // early would miss the commit.
    try await StandbyClusters.with([.init(), .init(applyDelayMilliseconds: 300)]) { clusters in
      let backend = try await PostgresBackend(configuration: clusters.configuration("reads=standby"))
      let store = Store(backend: backend)
      // Another handle writes all the while, so that the standbys are always replaying something.
      let other = Store(
        backend: try await PostgresBackend(configuration: clusters.configuration("reads=primary")))
      try await other.insert(StandbyItem(id: 1_000_000, value: 0))
      let writing = Task {
        var value: Int64 = 0
        while !Task.isCancelled {
          value += 1
          try? await other.update(StandbyItem(id: 1_000_000, value: value))
          try? await Task.sleep(for: .milliseconds(20))
        }
      }
      var stale: [String] = []
      for round in Int64(1)...120 {
        try await store.insert(StandbyItem(id: round, value: round))
        if try await store.get(StandbyItem.self, id: round) == nil {
          stale.append("get \(round) after insert")
        }
        try await store.update(StandbyItem(id: round, value: -round))
        if try await store.get(StandbyItem.self, id: round)?.value != -round {
          stale.append("get \(round) after update")
        }
        // The other handle's row is the one more.
        let count = try await store.query(StandbyItem.self).count()
        if count != Int(round) + 1 { stale.append("count \(count) after insert \(round)") }
        // Now and then a pause, so that reads also run once the standbys have caught up.
        if round % 10 == 0 {
          try await Task.sleep(for: .milliseconds(150))
          for _ in 0..<20 {
            if try await store.get(StandbyItem.self, id: round)?.value != -round {
              stale.append("get \(round) after a pause")
            }
            try await Task.sleep(for: .milliseconds(2))
          }
        }
      }
      writing.cancel()
      _ = await writing.value
      let served = backend.readsServed()
      let looks = backend.standbyLooks()
      try await store.close()
      try await other.close()
      print(
        "Read-your-writes run: 240 commits, \(served.values.reduce(0, +)) reads served \(served), \(looks) looks"
      )
      #expect(stale.isEmpty, "stale reads: \(stale.prefix(10))")
      #expect(served[clusters.hosts[1], default: 0] > 0, "no read went to the standby in step: \(served)")
    }
  }

  @Test(
    "a killed standby is left out, its reads go elsewhere without an error, and it is taken back when restarted"
  )
  func killedStandbyComesBack() async throws {
    try await StandbyClusters.with([.init(), .init()]) { clusters in
      let backend = try await PostgresBackend(configuration: clusters.configuration("reads=standby"))
      let store = Store(backend: backend)
      try await store.insert((1...20).map { StandbyItem(id: $0, value: $0) })
      let first = clusters.hosts[1]
      let second = clusters.hosts[2]
      _ = try await readUntil(store, backend, ids: 1...20) {
        $0[first, default: 0] >= 50 && $0[second, default: 0] >= 50
      }
      try await clusters.killStandby(0)
      // Every get still finds its row (readUntil expects it): the failed ones ran again elsewhere.
      let whileDown = try await readUntil(store, backend, ids: 1...20, within: .seconds(2)) { _ in false }
      let settled = try await readUntil(store, backend, ids: 1...20, within: .seconds(1)) { _ in false }
      #expect(
        settled[first, default: 0] == whileDown[first, default: 0], "reads still went to the killed standby")
      #expect(settled[second, default: 0] > whileDown[second, default: 0])
      try await clusters.restartStandby(0)
      let back = try await readUntil(store, backend, ids: 1...20, within: .seconds(30)) {
        $0[first, default: 0] >= settled[first, default: 0] + 50
      }
      try await store.close()
      #expect(
        back[first, default: 0] >= settled[first, default: 0] + 50, "the restarted standby was not taken back"
      )
    }
  }

  @Test(
    "after the change feed brings another handle's batch, the store's next read sees it, with the standby behind"
  )
  func readAfterTheFeed() async throws {
    // The standby replays each commit 2 s after the primary made it, and the lag bound is far
    // above that: only the floor can keep a read off the standby.
    try await StandbyClusters.with([.init(applyDelayMilliseconds: 2000)]) { clusters in
      let backend = try await PostgresBackend(
        configuration: clusters.configuration("reads=standby&maxStandbyLag=120"))
      let store = Store(backend: backend)
      var primaryOnly = try PostgresBackend.Configuration(
        url: StoreURL("postgres://coffer@\(clusters.hosts[0])/coffer?tls=disable"), environment: [:])
      primaryOnly.password = clusters.password
      let writer = Store(backend: try await PostgresBackend(configuration: primaryOnly))
      try await store.prepare([StandbyItem.self])
      try await store.recordChanges()
      try await store.insert(StandbyItem(id: 1, value: 1))
      // Until the standby has replayed the store's own writes and serves its reads.
      _ = try await readUntil(store, backend, ids: 1...1, within: .seconds(30)) {
        $0[clusters.hosts[1], default: 0] > 0
      }
      var position = try await store.lastChangePosition()
      var missed: [Int64] = []
      for id in Int64(2)...6 {
        try await writer.insert(StandbyItem(id: id, value: id))
        var arrived = false
        while !arrived {
          for try await batch in store.changes(after: position) {
            position = batch.position
            arrived = arrived || batch.changes.contains { $0.id == .int(id) }
          }
        }
        if try await store.get(StandbyItem.self, id: id) == nil { missed.append(id) }
      }
      let served = backend.readsServed()
      try await store.close()
      try await writer.close()
      #expect(missed.isEmpty, "reads after the feed brought these rows did not find them: \(missed)")
      #expect(served[clusters.hosts[1], default: 0] > 0, "no read went to the standby: \(served)")
    }
  }

  @Test("a standby further behind than maxStandbyLag serves no read; the one in step does")
  func laggingStandbyIsLeftOut() async throws {
    try await StandbyClusters.with([.init(), .init(applyDelayMilliseconds: 3000)]) { clusters in
      // A writer on the primary alone, as another process would be: its commits do not move the
      // reading store's floor, so only the lag bound can keep the reader off the standby that
      // replays 3 s late once that standby has passed the floor.
      var primaryOnly = try PostgresBackend.Configuration(
        url: StoreURL("postgres://coffer@\(clusters.hosts[0])/coffer?tls=disable"), environment: [:])
      primaryOnly.password = clusters.password
      let writer = Store(backend: try await PostgresBackend(configuration: primaryOnly))
      try await writer.insert(StandbyItem(id: 1, value: 0))
      let writing = Task {
        var value: Int64 = 0
        while !Task.isCancelled {
          value += 1
          try? await writer.insert(StandbyItem(id: 1000 + value, value: value))
          try? await Task.sleep(for: .milliseconds(20))
        }
      }
      try await Task.sleep(for: .seconds(4))
      let backend = try await PostgresBackend(
        configuration: clusters.configuration("reads=standby&maxStandbyLag=1"))
      let store = Store(backend: backend)
      // The late standby reaches the floor (the primary's position at the first look) about 3 s
      // after it was read; from then on only its lag keeps it out.
      let served = try await readUntil(store, backend, ids: 1...1, within: .seconds(6)) { _ in false }
      writing.cancel()
      _ = await writing.value
      try await store.close()
      try await writer.close()
      print("Reads served with a standby 3 s behind and maxStandbyLag=1: \(served)")
      #expect(served[clusters.hosts[2], default: 0] == 0, "the lagging standby served reads: \(served)")
      #expect(served[clusters.hosts[1], default: 0] > 0, "\(served)")
    }
  }
}

extension StandbyClusters {
  /// How many client sessions other than its own each standby has open in the store's database:
  /// proof from the servers' side (`pg_stat_activity`) that the store talks to them.
  func sessionsOnStandbys() async throws -> [Int] {
    var counts: [Int] = []
    for port in standbyPorts {
      let connection = try await PostgresConnection.connect(
        configuration: .init(
          host: "127.0.0.1", port: port, username: "coffer", password: password, database: "coffer",
          tls: .disable),
        id: 1, logger: Logger(label: "standby-sessions"))
      var count = 0
      let rows = try await connection.query(
        PostgresQuery(
          unsafeSQL:
            "SELECT count(*)::int8 FROM pg_stat_activity WHERE datname = 'coffer' AND backend_type = 'client backend' "
            + "AND pid <> pg_backend_pid()"), logger: Logger(label: "standby-sessions"))
      for try await row in rows { count = Int(try row.decode(Int64.self)) }
      try await connection.close()
      counts.append(count)
    }
    return counts
  }
}
