@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

@testable import CofferSync

/// The implicit genesis stamp and the bootstrap: rows a store held before sync get no sync state
/// of their own, an empty replica takes them in bulk, and afterwards everything merges as before —
/// on every backend and through `coffer+http://`.
@Suite struct BootstrapTests {
  static let schemas = [MergeOutcomeTests.thread, MergeOutcomeTests.post]

  /// Source and target backends.
  static var pairs: [[String]] {
    var pairs = [["sqlite", "memory"], ["memory", "lmdb"], ["lmdb", "plist"], ["plist", "sqlite"]]
    if ReplicaPlaces.available("served-sqlite", postgresURL: nil) {
      pairs += [["served-sqlite", "lmdb"], ["sqlite", "served-memory"]]
    }
    if TestServers.postgresURL != nil { pairs += [["postgres", "sqlite"], ["sqlite", "served-postgres"]] }
    return pairs
  }

  /// 6 threads and 30 posts, each post in a thread, with a unique slug.
  static func fill(_ store: Store) async throws {
    var operations: [ChangeSet.Operation] = []
    for id in 1...6 {
      operations.append(.insert(entity: "Thread", row: Row([.int(Int64(id)), .string("t\(id)")])))
    }
    for id in 1...30 {
      operations.append(.insert(entity: "Post", row: post(Int64(id), thread: Int64(id % 6 + 1))))
    }
    try await store.apply(ChangeSet(operations))
  }

  static func post(_ id: Int64, thread: Int64?, topic: Int64? = nil, slug: String? = nil) -> Row {
    Row([
      .int(id), thread.map(Value.int) ?? .null, topic.map(Value.int) ?? .null, .null,
      .string(slug ?? "s\(id)"),
    ])
  }

  static func rows(_ store: Store) async throws -> [[Row]] {
    [
      try await store.fetchRows(Query(entity: "Thread", sort: [Sort("id")])),
      try await store.fetchRows(Query(entity: "Post", sort: [Sort("id")])),
    ]
  }

  static func records(_ store: Store) async throws -> Int {
    try await store.fetchRows(Query(entity: "coffer.sync.rows")).count
  }

  static func synchronizer(_ source: Store, _ target: Store, target genesis: SyncReplica.Genesis = .implicit)
    -> Synchronizer
  {
    let tick = ConvergenceChecker.tickingWall()
    var sync = Synchronizer(
      local: SyncReplica(store: source, wall: tick, genesis: .implicit),
      remote: SyncReplica(store: target, wall: tick, genesis: genesis))
    sync.bootstrapPageSize = 7
    return sync
  }

  @Test(arguments: pairs) func anEmptyReplicaTakesTheRowsInBulkAndNoStateIsWritten(_ pair: [String])
    async throws
  {
    try await ReplicaPlaces.using(pair, postgresURL: TestServers.postgresURL, label: "bootstrap") { places in
      let source = try await places.open(0, schemas: Self.schemas)
      let target = try await places.open(1, schemas: Self.schemas)
      try await Self.fill(source)
      let sync = Self.synchronizer(source, target)
      let report = try await sync.sync()
      #expect(report.pushedRows == 36)
      #expect(try await Self.rows(target) == Self.rows(source))
      #expect(try await Self.records(source) == 0)
      #expect(try await Self.records(target) == 0)
      _ = try await sync.sync()
      let positions = (try await source.lastChangePosition(), try await target.lastChangePosition())
      let again = try await sync.sync()
      #expect(again.pushedRows == 0 && again.pulledRows == 0)
      #expect(try await source.lastChangePosition() == positions.0)
      #expect(try await target.lastChangePosition() == positions.1)
    }
  }

  @Test(arguments: pairs) func changesOnBothSidesAfterABootstrapMerge(_ pair: [String]) async throws {
    try await ReplicaPlaces.using(pair, postgresURL: TestServers.postgresURL, label: "bootstrap") { places in
      let source = try await places.open(0, schemas: Self.schemas)
      let target = try await places.open(1, schemas: Self.schemas)
      try await Self.fill(source)
      let sync = Self.synchronizer(source, target)
      // A genesis row deleted before the first sync never reaches the target.
      try await source.apply(ChangeSet([.delete(entity: "Post", id: .int(5))]))
      try await sync.sync()
      try await source.apply(ChangeSet([.update(entity: "Thread", row: Row([.int(1), .string("news")]))]))
      try await target.apply(
        ChangeSet([
          .update(entity: "Post", row: Self.post(6, thread: 1, slug: "six")),
          .delete(entity: "Thread", id: .int(2)),
          .insert(entity: "Thread", row: Row([.int(100), .string("new")])),
        ]))
      for _ in 0..<2 { try await sync.sync() }
      let rows = try await Self.rows(source)
      #expect(try await Self.rows(target) == rows)
      #expect(rows[0].map { $0[0] } == [1, 3, 4, 5, 6, 100].map { Value.int($0) })
      #expect(rows[0].first?[1] == .string("news"))
      #expect(!rows[1].contains { $0[0] == .int(5) || $0[1] == .int(2) })
      #expect(rows[1].first { $0[0] == .int(6) }?[4] == .string("six"))
    }
  }

  @Test func theFirstChangeOfAGenesisRowStampsItWholeAndLaterChangesMergePerField() async throws {
    try await ReplicaPlaces.using(["sqlite", "lmdb"], postgresURL: nil, label: "bootstrap") { places in
      let source = try await places.open(0, schemas: Self.schemas)
      let target = try await places.open(1, schemas: Self.schemas)
      try await Self.fill(source)
      let sync = Self.synchronizer(source, target)
      try await sync.sync()
      // Post 1 has no state of its own on either side: each side's first change stamps every
      // field, and the later one (the target's, stamped when it receives) wins whole.
      try await source.apply(ChangeSet([.update(entity: "Post", row: Self.post(1, thread: 2, slug: "one"))]))
      try await target.apply(ChangeSet([.update(entity: "Post", row: Self.post(1, thread: 2, topic: 3))]))
      try await sync.sync()
      let whole = Self.post(1, thread: 2, topic: 3)
      #expect(
        try await source.fetchRows(
          Query(entity: "Post", filter: .compare(field: "id", op: .equal, value: .int(1)))) == [whole])
      // Now it has one: changes of different fields both survive.
      try await source.apply(
        ChangeSet([.update(entity: "Post", row: Self.post(1, thread: 2, topic: 3, slug: "one"))]))
      try await target.apply(ChangeSet([.update(entity: "Post", row: Self.post(1, thread: 2, topic: 4))]))
      for _ in 0..<2 { try await sync.sync() }
      let merged = [Self.post(1, thread: 2, topic: 4, slug: "one")]
      let query = Query(entity: "Post", filter: .compare(field: "id", op: .equal, value: .int(1)))
      #expect(try await source.fetchRows(query) == merged)
      #expect(try await target.fetchRows(query) == merged)
    }
  }

  @Test func aThirdReplicaGetsTheRowsThroughTheFeedOfOneThatTookABootstrap() async throws {
    try await ReplicaPlaces.using(["sqlite", "lmdb", "memory"], postgresURL: nil, label: "bootstrap") {
      places in
      let a = try await places.open(0, schemas: Self.schemas)
      let b = try await places.open(1, schemas: Self.schemas)
      let c = try await places.open(2, schemas: Self.schemas)
      try await Self.fill(a)
      let tick = ConvergenceChecker.tickingWall()
      let (ra, rb, rc) = (
        SyncReplica(store: a, wall: tick, genesis: .implicit),
        SyncReplica(store: b, wall: tick, genesis: .implicit),
        SyncReplica(store: c, wall: tick, genesis: .implicit)
      )
      // b and c start empty (no genesis stamp), and c has merged from b before b takes a's rows:
      // b's feed brings them to c.
      _ = try await rb.replicaID()
      _ = try await rc.replicaID()
      try await c.apply(ChangeSet([.insert(entity: "Thread", row: Row([.int(50), .string("c")]))]))
      try await Synchronizer(local: rb, remote: rc).sync()
      var ab = Synchronizer(local: ra, remote: rb)
      ab.bootstrapPageSize = 4
      try await ab.sync()
      try await Synchronizer(local: rb, remote: rc).sync()
      #expect(try await Self.rows(c) == Self.rows(b))
      // a and c meet directly, and all three agree.
      try await Synchronizer(local: ra, remote: rc).sync()
      try await ab.sync()
      let rows = try await Self.rows(a)
      #expect(rows[0].count == 7 && rows[1].count == 30)
      #expect(try await Self.rows(b) == rows)
      #expect(try await Self.rows(c) == rows)
    }
  }

  @Test func anInterruptedBootstrapGoesOnWithoutWritingStates() async throws {
    struct Interrupted: Error {}
    try await ReplicaPlaces.using(["sqlite", "sqlite"], postgresURL: nil, label: "bootstrap") { places in
      let source = try await places.open(0, schemas: Self.schemas)
      let target = try await places.open(1, schemas: Self.schemas)
      try await Self.fill(source)
      let tick = ConvergenceChecker.tickingWall()
      let (local, remote) = (
        SyncReplica(store: source, wall: tick, genesis: .implicit),
        SyncReplica(store: target, wall: tick, genesis: .implicit)
      )
      let pages = PageCount()
      await #expect(throws: Interrupted.self) {
        try await local.bootstrap(pageSize: 5) { page in
          if await pages.next() == 3 { throw Interrupted() }
          _ = try await remote.receive(bootstrap: page)
        }
      }
      #expect(try await remote.position(of: try await local.replicaID()) == nil)
      try await source.apply(ChangeSet([.update(entity: "Thread", row: Row([.int(1), .string("news")]))]))
      var sync = Synchronizer(local: local, remote: remote)
      sync.bootstrapPageSize = 5
      try await sync.sync()
      #expect(try await Self.rows(target) == Self.rows(source))
      #expect(try await Self.records(target) == 1)
    }
  }

  @Test func rowsWithLargeValuesComeInSmallerPages() async throws {
    let blob = try EntitySchema(
      name: "Blob", fields: [Field("id", .int), Field("data", .bytes)], idField: "id")
    try await ReplicaPlaces.using(["sqlite", "memory"], postgresURL: nil, label: "bootstrap") { places in
      let source = try await places.open(0, schemas: [blob])
      let target = try await places.open(1, schemas: [blob])
      let rows = (0..<6).map { Row([.int(Int64($0)), .bytes(Data(repeating: UInt8($0), count: 6 << 20))]) }
      try await source.apply(ChangeSet(rows.map { .insert(entity: "Blob", row: $0) }))
      let report = try await Synchronizer(
        local: SyncReplica(store: source, genesis: .implicit),
        remote: SyncReplica(store: target, genesis: .implicit)
      ).sync()
      // 16 MiB a page at most: three rows, then three.
      #expect(report.pushedMessages == 2 && report.pushedRows == 6)
      #expect(try await target.fetchRows(Query(entity: "Blob", sort: [Sort("id")])) == rows)
    }
  }

  @Test func aStampedReplicaKeepsAStatePerRowItTakes() async throws {
    try await ReplicaPlaces.using(["lmdb", "sqlite"], postgresURL: nil, label: "bootstrap") { places in
      let source = try await places.open(0, schemas: Self.schemas)
      let target = try await places.open(1, schemas: Self.schemas)
      try await Self.fill(source)
      try await Self.synchronizer(source, target, target: .stamped).sync()
      #expect(try await Self.rows(target) == Self.rows(source))
      #expect(try await Self.records(source) == 0)
      #expect(try await Self.records(target) == 36)
    }
  }

  @Test(arguments: [["sqlite", "lmdb"], ["memory", "plist"]])
  func aReplicaWithRowsOfItsOwnMergesTheBootstrapWithTheSameOutcomes(_ pair: [String]) async throws {
    try await ReplicaPlaces.using(pair, postgresURL: nil, label: "bootstrap") { places in
      let source = try await places.open(0, schemas: Self.schemas)
      let target = try await places.open(1, schemas: Self.schemas)
      try await Self.fill(source)
      let tick = ConvergenceChecker.tickingWall()
      let local = SyncReplica(store: source, wall: tick, genesis: .implicit)
      _ = try await local.replicaID()
      // The target's own rows, one with a slug the source's post 3 has had since before.
      try await target.apply(
        ChangeSet([
          .insert(entity: "Thread", row: Row([.int(200), .string("mine")])),
          .insert(entity: "Post", row: Self.post(300, thread: 200, slug: "s3")),
        ]))
      let remote = SyncReplica(store: target, wall: tick, genesis: .implicit)
      var sync = Synchronizer(local: local, remote: remote)
      sync.bootstrapPageSize = 7
      for _ in 0..<2 { try await sync.sync() }
      let rows = try await Self.rows(source)
      #expect(try await Self.rows(target) == rows)
      #expect(rows[0].count == 7 && rows[1].count == 30)
      #expect(!rows[1].contains { $0[0] == .int(300) })
      for replica in [local, remote] {
        let conflicts = try await replica.conflicts()
        #expect(conflicts.map(\.id) == [.int(300)])
        #expect(conflicts.first?.isHeldBack == true)
      }
    }
  }
}

/// Counts the pages a bootstrap delivered.
private actor PageCount {
  private var count = 0

  /// The number of this page, from 0.
  func next() -> Int {
    count += 1
    return count - 1
  }
}
