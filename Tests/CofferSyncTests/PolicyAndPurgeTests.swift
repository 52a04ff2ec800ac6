@_spi(Backend) import Coffer
import CofferStores
import CofferSync
import CofferTestSupport
import Foundation
import Testing

/// Conflict policies set on a server replica, and tombstones purged after a retention.
@Suite struct PolicyAndPurgeTests {
  /// A server replica and a device replica on one backend, with clocks that never tie, both
  /// holding note 1 "milk" with 1 star.
  struct Pair {
    var server: Store
    var device: Store
    var serverReplica: SyncReplica
    var sync: Synchronizer
    var folder: TemporaryFolder
    var tick: @Sendable () -> Int64
  }

  static func pair(_ backend: String, policies: [String: SyncPolicy]) async throws -> Pair {
    let folder = try TemporaryFolder("sync-policy")
    let tick = ConvergenceChecker.tickingWall()
    let stores = try await ConvergenceChecker.openStores(
      backend, names: ["server", "device"], in: folder, schemas: [SynchronizerTests.note])
    try await stores[0].apply(ChangeSet([.insert(entity: "Note", row: SynchronizerTests.note(1, "milk", 1))]))
    let serverReplica = SyncReplica(store: stores[0], wall: tick, policies: policies)
    let sync = Synchronizer(local: SyncReplica(store: stores[1], wall: tick), remote: serverReplica)
    try await sync.sync()
    return Pair(
      server: stores[0], device: stores[1], serverReplica: serverReplica, sync: sync, folder: folder,
      tick: tick)
  }

  /// The server changes note 1 first (its change stamped first), then the device, without
  /// seeing it; then they sync.
  static func concurrentEdits(_ pair: Pair, server: Row, device: Row) async throws {
    try await pair.server.apply(ChangeSet([.update(entity: "Note", row: server)]))
    try await pair.serverReplica.stamp()
    try await pair.device.apply(ChangeSet([.update(entity: "Note", row: device)]))
    try await pair.sync.sync()
    try await pair.sync.sync()
  }

  @Test(arguments: MergeOutcomeTests.backends)
  func theServerKeepsItsValueAgainstAChangeMadeWithoutSeeingIt(backend: String) async throws {
    let pair = try await Self.pair(backend, policies: ["Note": .serverWins])
    try await Self.concurrentEdits(
      pair, server: SynchronizerTests.note(1, "oat milk", 1), device: SynchronizerTests.note(1, "soy milk", 4)
    )
    // The title both changed keeps the server's; the stars only the device changed are the device's.
    for store in [pair.server, pair.device] {
      #expect(
        try await SynchronizerTests.notes(store) == [SynchronizerTests.note(1, "oat milk", 4)], "\(backend)")
    }
    // A change made after seeing the server's value wins as usual.
    try await pair.device.apply(
      ChangeSet([.update(entity: "Note", row: SynchronizerTests.note(1, "rice milk", 4))]))
    try await pair.sync.sync()
    for store in [pair.server, pair.device] {
      #expect(
        try await SynchronizerTests.notes(store) == [SynchronizerTests.note(1, "rice milk", 4)], "\(backend)")
    }
  }

  @Test(arguments: MergeOutcomeTests.backends)
  func aCustomResolverGetsTheBaseAndBothValues(backend: String) async throws {
    let pair = try await Self.pair(
      backend,
      policies: [
        "Note": .custom { conflict in
          switch (conflict.base, conflict.local, conflict.remote) {
          case (.string(let base)?, .string(let local), .string(let remote)):
            .string("\(base)|\(local)|\(remote)")
          case (_, .int(let local), .int(let remote)): .int(max(local, remote))
          default: conflict.remote
          }
        }
      ])
    try await Self.concurrentEdits(
      pair, server: SynchronizerTests.note(1, "oat", 5), device: SynchronizerTests.note(1, "soy", 3))
    for store in [pair.server, pair.device] {
      #expect(
        try await SynchronizerTests.notes(store) == [SynchronizerTests.note(1, "milk|oat|soy", 5)],
        "\(backend)")
    }
  }

  @Test(arguments: MergeOutcomeTests.backends)
  func purgedTombstonesLeaveTheRowsAsTheyWere(backend: String) async throws {
    let pair = try await Self.pair(backend, policies: [:])
    try await pair.device.apply(
      ChangeSet([
        .insert(entity: "Note", row: SynchronizerTests.note(2, "eggs")), .delete(entity: "Note", id: .int(1)),
      ]))
    try await pair.sync.sync()
    #expect(try await pair.serverReplica.purgeTombstones(olderThan: .seconds(3600)) == 0)
    #expect(try await pair.serverReplica.purgeTombstones(olderThan: .zero) == 1)
    #expect(try await pair.sync.local.purgeTombstones(olderThan: .zero) == 1)
    try await pair.sync.sync()
    for store in [pair.server, pair.device] {
      #expect(try await SynchronizerTests.notes(store) == [SynchronizerTests.note(2, "eggs")], "\(backend)")
    }
  }

  @Test(arguments: MergeOutcomeTests.backends)
  func aReplicaOfflineLongerThanTheRetentionIsToldToStartAgain(backend: String) async throws {
    let pair = try await Self.pair(backend, policies: [:])
    // A third replica writes a row, then stays away while the server deletes and purges.
    let away = try await ConvergenceChecker.openStores(
      backend, names: ["away"], in: pair.folder, schemas: [SynchronizerTests.note])[0]
    try await away.apply(ChangeSet([.insert(entity: "Note", row: SynchronizerTests.note(7, "old"))]))
    let awayReplica = SyncReplica(store: away, wall: pair.tick)
    try await awayReplica.stamp()
    try await pair.server.apply(ChangeSet([.delete(entity: "Note", id: .int(1))]))
    try await pair.sync.sync()
    #expect(try await pair.serverReplica.purgeTombstones(olderThan: .zero) == 1)

    let error = await #expect(throws: CofferError.self) {
      try await Synchronizer(local: awayReplica, remote: pair.serverReplica).sync()
    }
    #expect(error?.code == .changesTrimmed)
    #expect(error?.entity == "Note")
    #expect(error?.message.contains("again from an empty store") == true)
    #expect(try await SynchronizerTests.notes(pair.server) == [])
  }
}
