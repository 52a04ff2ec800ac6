import Synchronization

/// Every row of a table in id order, as the last full read gathered it, kept until any row of
/// the table changes — so that reading a whole unchanged table again hands over the rows it
/// already gathered, instead of looking each id up once more.
///
/// Shared by copies of the table while their rows agree, as ``IDOrder`` is: a table that
/// changes a row gets a box of its own (or empties its box when no copy shares it), and a
/// snapshot keeps the box that matches its rows.
final class ScanOrder: Sendable {
  private let kept = LockedState<[Row]?>(nil)
  /// Whether rows are kept, so that emptying an empty box (at each change) costs no lock.
  private let filled = Atomic<Bool>(false)

  /// The rows kept, or those `gather` makes, kept.
  func rows(_ gather: () throws -> [Row]) rethrows -> [Row] {
    if filled.load(ordering: .acquiring), let rows = kept.withLock({ $0 }) { return rows }
    let rows = try gather()
    kept.withLock { $0 = rows }
    filled.store(true, ordering: .releasing)
    return rows
  }

  /// Forgets the rows.
  func clear() {
    guard filled.load(ordering: .acquiring) else { return }
    kept.withLock { $0 = nil }
    filled.store(false, ordering: .releasing)
  }
}

extension InMemoryTable {
  /// Forgets the rows of the last full read: called at every change of a row.
  mutating func scanChanged() {
    if isKnownUniquelyReferenced(&scanOrder) { scanOrder.clear() } else { scanOrder = ScanOrder() }
  }
}
