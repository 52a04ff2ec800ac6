@_spi(Backend) import Coffer
import CofferChildProcess
import CofferStores
import CofferTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The SIGKILL drill: `coffer sync LOCAL REMOTE --follow` in a child process, killed outright in
/// the middle of a sync again and again while both sides keep writing; then one sync to the end.
///
/// Every change must then be on both sides (no loss), each replica's feed must show each row's
/// versions in the order they were written with none written twice (each change applied once),
/// the two digests must agree, and a further sync must change nothing.
@Suite struct KilledSyncTests {
  static let note = SynchronizerTests.note
  /// Kills per run, and the rows each side inserts (and updates) before each.
  static let rounds = 6
  static let insertsPerRound = 1_200
  static let updatesPerRound = 100

  static var coffer: String { Bundle.main.bundleURL.appendingPathComponent("coffer").path }

  @Test(arguments: ["sqlite", "served-sqlite"])
  func syncKilledMidwayLosesAndRepeatsNothing(remote: String) async throws {
    guard ReplicaPlaces.available(remote, postgresURL: nil) else {
      try Test.cancel("Skipped: this build cannot make a \(remote) replica (enable every trait)")
    }
    try await ReplicaPlaces.using(["sqlite", remote], postgresURL: nil, label: "killed") {
      try await Self.drill($0)
    }
  }

  /// The drill with the implicit genesis stamp: the local store holds 25,000 rows before it
  /// first syncs and the remote one none, so the first kills land in the middle of a bootstrap
  /// (three pages), the later ones in merges.
  @Test(arguments: ["sqlite", "served-sqlite"])
  func syncWithTheGenesisStampKilledMidwayLosesAndRepeatsNothing(remote: String) async throws {
    guard ReplicaPlaces.available(remote, postgresURL: nil) else {
      try Test.cancel("Skipped: this build cannot make a \(remote) replica (enable every trait)")
    }
    try await ReplicaPlaces.using(["sqlite", remote], postgresURL: nil, label: "killed-genesis") {
      try await Self.drill($0, genesis: true)
    }
  }

  /// The drill on `places`' two replicas: the first is the local store, the second the remote.
  /// With `genesis`, `coffer sync --implicit-genesis`, and the first round writes 25,000 rows on
  /// the local side only.
  static func drill(_ places: ReplicaPlaces, genesis: Bool = false) async throws {
    let sides = [try await places.open(0, schemas: [note]), try await places.open(1, schemas: [note])]
    let flags = genesis ? ["--implicit-genesis", "--batch-size", "10000"] : []
    // Each side's rows: id → the version last written (titles say "side id vN").
    var written: [[Int64: Int]] = [[:], [:]]
    var midway = 0
    for round in 1...rounds {
      for side in 0..<2 {
        let inserts = genesis && round == 1 ? (side == 0 ? 25_000 : 0) : insertsPerRound
        try await write(
          sides[side], side: side, round: round, inserts: inserts,
          spacing: genesis ? 100_000 : insertsPerRound,
          written: &written[side])
      }
      let targets = [written[0].count + written[1].count, written[0].count + written[1].count]
      let child = try ChildProcess(
        coffer, ["sync", places.urls[0], places.urls[1], "--follow"] + flags, standardOutput: .nullDevice,
        standardError: .nullDevice)
      // Killed as soon as either side holds some, not all, of the rows: in the middle of a merge.
      var partly = false
      for _ in 0..<10_000 where !partly {
        let counts = [try await count(sides[0]), try await count(sides[1])]
        partly = counts.indices.contains { counts[$0] > written[$0].count && counts[$0] < targets[$0] }
        if !partly { try await Task.sleep(for: .milliseconds(2)) }
        if child.termination != nil { break }
      }
      if partly { midway += 1 }
      child.kill(SIGKILL)
      let ended = await child.waitUntilExit()
      #expect(ended == .signaled(SIGKILL), "round \(round): the sync ended on its own: \(ended)")
    }
    let finished = try await ChildProcess.run(coffer, ["sync", places.urls[0], places.urls[1]] + flags)
    #expect(finished.termination.status == 0, "the last sync failed: \(finished.errors)")
    let again = try await ChildProcess.run(coffer, ["sync", places.urls[0], places.urls[1]] + flags)
    #expect(again.output.contains("Synced: 0 rows changed on the remote store, 0 on the local store"))
    print(
      "killed-sync drill\(genesis ? " (genesis stamp)" : "") on \(places.urls[1].prefix(while: { $0 != ":" })): "
        + "\(rounds) kills, \(midway) while "
        + "one side held part of the rows; \(written[0].count + written[1].count) rows")

    var expected: [Int64: Row] = [:]
    for side in 0..<2 {
      for (id, version) in written[side] { expected[id] = Row(title(side: side, id: id, version: version)) }
    }
    for (index, store) in sides.enumerated() {
      let rows = try await store.fetchRows(Query(entity: note.name))
      var found: [Int64: Row] = [:]
      for row in rows { if case .int(let id) = row[0] { found[id] = row } }
      #expect(found.count == expected.count, "side \(index) holds \(found.count) rows of \(expected.count)")
      let wrong = expected.filter { found[$0.key] != $0.value }.keys.sorted()
      #expect(wrong.isEmpty, "side \(index): rows lost or stale: \(wrong.prefix(10))")
      let repeated = try await repeatedOrBackwards(store)
      #expect(
        repeated.isEmpty, "side \(index): versions written twice or out of order: \(repeated.prefix(10))")
    }
    let digests = [
      try await sides[0].digest(entities: [note.name]), try await sides[1].digest(entities: [note.name]),
    ]
    #expect(digests[0] == digests[1])
  }

  /// Inserts new rows on one side and writes a new version of some of that side's older ones.
  /// `inserts` new rows, with ids `spacing` apart from one round to the next.
  static func write(
    _ store: Store, side: Int, round: Int, inserts: Int = insertsPerRound, spacing: Int = insertsPerRound,
    written: inout [Int64: Int]
  ) async throws {
    let base = Int64(side) * 1_000_000 + Int64(round - 1) * Int64(spacing)
    var operations: [ChangeSet.Operation] = []
    for id in (base + 1)..<(base + 1 + Int64(inserts)) {
      written[id] = 1
      operations.append(.insert(entity: note.name, row: Row(title(side: side, id: id, version: 1))))
    }
    for id in written.keys.sorted().filter({ $0 <= base }).shuffled().prefix(updatesPerRound) {
      let version = (written[id] ?? 0) + 1
      written[id] = version
      operations.append(.update(entity: note.name, row: Row(title(side: side, id: id, version: version))))
    }
    for start in stride(from: 0, to: operations.count, by: 300) {
      try await store.apply(ChangeSet(Array(operations[start..<min(operations.count, start + 300)])))
    }
  }

  /// A row's values at a version: its title names the side, the id and the version.
  static func title(side: Int, id: Int64, version: Int) -> [Value] {
    [.int(id), .string("s\(side) \(id) v\(version)"), .int(Int64(version))]
  }

  static func count(_ store: Store) async throws -> Int {
    try await store.countRows(Query(entity: note.name))
  }

  /// The rows whose versions, in the order the store's feed recorded them, repeat or go back:
  /// a change applied twice, or an older one applied after a newer.
  static func repeatedOrBackwards(_ store: Store) async throws -> [Int64] {
    var last: [Int64: Int64] = [:]
    var found: Set<Int64> = []
    for try await batch in store.changes(after: nil) {
      for change in batch.changes where change.entity == note.name && change.kind != .delete {
        guard case .int(let id) = change.id, case .int(let version)? = change.value(of: "stars") else {
          continue
        }
        if let before = last[id], version <= before { found.insert(id) }
        last[id] = version
      }
    }
    return found.sorted()
  }
}
