import Coffer

/// A row of a commit: each commit inserts ``Workload/rowsPerCommit`` of them.
struct CrashItem: Storable {
  /// `commit * 100 + slot`.
  var id: Int64
  /// The commit that inserted the row.
  var commit: Int64
  /// The row's place in its commit, from 0.
  var slot: Int64
  /// Text long enough that a commit spans several 512-byte sectors.
  var payload: String
}

/// The one row every commit after the first updates: its value is the last commit applied.
struct CrashCounter: Storable {
  /// Always 1.
  var id: Int64
  /// The number of the last commit the store holds.
  var value: Int64
}

/// What the writer commits and what a reader must find: commit `n` inserts
/// ``rowsPerCommit`` items and sets the counter to `n` (inserting it in commit 1), all in one
/// batch, so a store that shows some of a commit's rows and not the others, or a counter that
/// disagrees with the items, shows half a batch.
enum Workload {
  /// Items each commit inserts.
  static let rowsPerCommit = 3

  /// The payload of an item: deterministic, about 300 bytes, different for every row.
  static func payload(commit: Int64, slot: Int64) -> String {
    let stem = "commit \(commit) slot \(slot) "
    return String(String(repeating: stem, count: 300 / stem.count + 1).prefix(300))
  }

  /// The items commit `n` inserts.
  static func items(commit: Int64) -> [CrashItem] {
    (0..<Int64(rowsPerCommit)).map { slot in
      CrashItem(
        id: commit * 100 + slot, commit: commit, slot: slot, payload: payload(commit: commit, slot: slot))
    }
  }

  /// Applies commit `n` as one batch.
  static func commit(_ number: Int64, to store: Store) async throws {
    try await store.batch(for: [CrashItem.self, CrashCounter.self]) { batch in
      for item in items(commit: number) { try batch.insert(item) }
      let counter = CrashCounter(id: 1, value: number)
      if number == 1 { try batch.insert(counter) } else { try batch.update(counter) }
    }
  }
}

extension Workload {
  /// Applies commit `n` one row at a time, each its own batch: not atomic, so a crash between
  /// two of them leaves half of the commit (the negative control `control-split-batches`).
  static func commitRowByRow(_ number: Int64, to store: Store) async throws {
    for item in items(commit: number) { try await store.insert(item) }
    let counter = CrashCounter(id: 1, value: number)
    if number == 1 { try await store.insert(counter) } else { try await store.update(counter) }
  }
}

/// What a reader found in a store: the commits whose rows are all there and right, the ones
/// only partly there, rows whose contents are wrong, and the counter.
struct StoreContents: Equatable, Sendable {
  /// Commits with every row present and correct, ascending.
  var complete: [Int64] = []
  /// Commits with some rows missing, ascending.
  var partial: [Int64] = []
  /// Rows whose fields are not what their commit wrote.
  var corrupt = 0
  /// The counter's value, or `nil` when there is no counter row.
  var counter: Int64?

  /// Reads every row of both entities.
  init(reading store: Store) async throws {
    let items = try await store.all(CrashItem.self)
    var slots: [Int64: Int] = [:]
    for item in items {
      let expected = Workload.payload(commit: item.commit, slot: item.slot)
      guard item.id == item.commit * 100 + item.slot, item.payload == expected, item.slot >= 0,
        item.slot < Int64(Workload.rowsPerCommit)
      else {
        corrupt += 1
        continue
      }
      slots[item.commit, default: 0] += 1
    }
    complete = slots.filter { $0.value == Workload.rowsPerCommit }.map(\.key).sorted()
    partial = slots.filter { $0.value != Workload.rowsPerCommit }.map(\.key).sorted()
    let counters = try await store.all(CrashCounter.self)
    counter = counters.first?.value
    if counters.count > 1 || counters.contains(where: { $0.id != 1 }) { corrupt += 1 }
  }

  /// Contents given field by field (a parsed report line).
  init(complete: [Int64], partial: [Int64], corrupt: Int, counter: Int64?) {
    self.complete = complete
    self.partial = partial
    self.corrupt = corrupt
    self.counter = counter
  }

  /// The `m` of "commits 1…m are all there, whole, and nothing else": `nil` when the contents
  /// are anything else (a gap, a partial commit, a wrong row, a counter that disagrees).
  var wholePrefix: Int64? {
    guard partial.isEmpty, corrupt == 0 else { return nil }
    let count = Int64(complete.count)
    guard complete == (0..<count).map({ $0 + 1 }) else { return nil }
    guard counter == (count == 0 ? nil : count) else { return nil }
    return count
  }
}
