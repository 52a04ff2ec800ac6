@_spi(Backend) import Coffer
import CofferStores
import CofferSync
import CofferTestSupport
import Foundation
import Testing

/// What a merge stores when it breaks a reference or a unique index: the same on every backend
/// and on both replicas, recorded as a conflict, and undone when the cause goes away.
@Suite struct MergeOutcomeTests {
  static let thread: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Thread", fields: [Field("id", .int), Field("title", .string)], idField: "id")
    } catch {
      preconditionFailure("The test schema is well formed")
    }
  }()
  static let post: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Post",
        fields: [
          Field("id", .int), Field("thread", .int, isOptional: true), Field("topic", .int, isOptional: true),
          Field("keeper", .int, isOptional: true), Field("slug", .string, isOptional: true),
        ], idField: "id", indexes: [.unique("slug")],
        references: [
          EntityReference(field: "thread", entity: "Thread", onDelete: .cascade),
          EntityReference(field: "topic", entity: "Thread", onDelete: .nullify),
          EntityReference(field: "keeper", entity: "Thread", onDelete: .deny),
        ])
    } catch {
      preconditionFailure("The test schema is well formed")
    }
  }()

  static var backends: [String] {
    ["memory", "sqlite", "lmdb", "plist"] + (TestServers.postgresURL == nil ? [] : ["postgres"])
  }

  /// Two replicas on one backend, both holding thread 1, with clocks that never tie.
  struct Pair {
    var a: Store
    var b: Store
    var sync: Synchronizer
    var folder: TemporaryFolder

    /// Syncs until neither side has anything new.
    func settle() async throws {
      for _ in 0..<3 { try await sync.sync() }
    }
  }

  static func pair(_ backend: String) async throws -> Pair {
    let folder = try TemporaryFolder("sync-outcome")
    let tick = ConvergenceChecker.tickingWall()
    let stores = try await ConvergenceChecker.openStores(
      backend, names: ["a", "b"], in: folder, schemas: [thread, post])
    try await stores[0].apply(ChangeSet([.insert(entity: "Thread", row: Row([.int(1), .string("news")]))]))
    let sync = Synchronizer(
      local: SyncReplica(store: stores[0], wall: tick), remote: SyncReplica(store: stores[1], wall: tick))
    try await sync.sync()
    return Pair(a: stores[0], b: stores[1], sync: sync, folder: folder)
  }

  static func post(
    _ id: Int64, thread: Int64? = nil, topic: Int64? = nil, keeper: Int64? = nil, slug: String? = nil
  ) -> Row {
    Row([
      .int(id), thread.map(Value.int) ?? .null, topic.map(Value.int) ?? .null, keeper.map(Value.int) ?? .null,
      slug.map(Value.string) ?? .null,
    ])
  }

  static func rows(_ store: Store, _ entity: String) async throws -> [Row] {
    try await store.fetchRows(Query(entity: entity, sort: [Sort("id")]))
  }

  /// Thread 1 deleted on b while a posts `row` into it.
  static func postIntoDeletedThread(_ backend: String, _ row: Row) async throws -> Pair {
    let pair = try await pair(backend)
    try await pair.b.apply(ChangeSet([.delete(entity: "Thread", id: .int(1))]))
    try await pair.a.apply(ChangeSet([.insert(entity: "Post", row: row)]))
    try await pair.settle()
    return pair
  }

  @Test(arguments: backends)
  func aRowSyncedIntoARowDeletedElsewhereIsHeldBackUntilItComesBack(backend: String) async throws {
    for rule in ["thread", "keeper"] {
      let row = rule == "thread" ? Self.post(10, thread: 1) : Self.post(10, keeper: 1)
      let pair = try await Self.postIntoDeletedThread(backend, row)
      let held = SyncConflict(
        entity: "Post", id: .int(10), reasons: [.missingReference(field: rule, entity: "Thread")],
        isHeldBack: true)
      for store in [pair.a, pair.b] {
        #expect(try await Self.rows(store, "Post") == [], "\(rule) on \(backend)")
        #expect(try await Self.rows(store, "Thread") == [])
      }
      #expect(try await pair.sync.local.conflicts() == [held])
      #expect(try await pair.sync.remote.conflicts() == [held])

      try await pair.b.apply(ChangeSet([.insert(entity: "Thread", row: Row([.int(1), .string("again")]))]))
      try await pair.settle()
      for store in [pair.a, pair.b] {
        #expect(try await Self.rows(store, "Post") == [row], "\(rule) on \(backend)")
      }
      #expect(try await pair.sync.local.conflicts() == [])
      #expect(try await pair.sync.remote.conflicts() == [])
    }
  }

  @Test(arguments: backends)
  func aNullifyReferenceToARowDeletedElsewhereIsStoredAsNull(backend: String) async throws {
    let pair = try await Self.postIntoDeletedThread(backend, Self.post(10, topic: 1, slug: "hello"))
    for store in [pair.a, pair.b] {
      #expect(try await Self.rows(store, "Post") == [Self.post(10, slug: "hello")], "on \(backend)")
    }
    let nulled = SyncConflict(
      entity: "Post", id: .int(10), reasons: [.missingReference(field: "topic", entity: "Thread")],
      isHeldBack: false)
    #expect(try await pair.sync.local.conflicts() == [nulled])
    #expect(try await pair.sync.remote.conflicts() == [nulled])

    // Editing another field keeps the reference as merged; nothing is sent back as new.
    try await pair.a.apply(ChangeSet([.update(entity: "Post", row: Self.post(10, slug: "hi"))]))
    try await pair.settle()
    for store in [pair.a, pair.b] {
      #expect(try await Self.rows(store, "Post") == [Self.post(10, slug: "hi")])
    }
    #expect(try await pair.sync.remote.conflicts() == [nulled])
  }

  @Test(arguments: backends)
  func aUniqueClashKeepsTheRowThatSetTheValueFirst(backend: String) async throws {
    let pair = try await Self.pair(backend)
    try await pair.a.apply(ChangeSet([.insert(entity: "Post", row: Self.post(10, slug: "same"))]))
    try await pair.b.apply(ChangeSet([.insert(entity: "Post", row: Self.post(20, slug: "same"))]))
    try await pair.settle()
    let clash = SyncConflict(
      entity: "Post", id: .int(20), reasons: [.uniqueClash(fields: ["slug"])], isHeldBack: true)
    for store in [pair.a, pair.b] {
      #expect(try await Self.rows(store, "Post") == [Self.post(10, slug: "same")], "on \(backend)")
    }
    #expect(try await pair.sync.local.conflicts() == [clash])
    #expect(try await pair.sync.remote.conflicts() == [clash])

    // The first row gives the value up: the other one is stored.
    try await pair.a.apply(ChangeSet([.update(entity: "Post", row: Self.post(10, slug: "other"))]))
    try await pair.settle()
    for store in [pair.a, pair.b] {
      #expect(
        try await Self.rows(store, "Post") == [Self.post(10, slug: "other"), Self.post(20, slug: "same")],
        "on \(backend)")
    }
    #expect(try await pair.sync.local.conflicts() == [])
    #expect(try await pair.sync.remote.conflicts() == [])
  }
}
