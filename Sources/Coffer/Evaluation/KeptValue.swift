import Synchronization

/// A value a read works out once and later reads reuse, held in a box that copies of an
/// ``InMemoryTable`` share: a table is a value (a copy is a snapshot), so a table that changes
/// what the value depends on calls ``forget(_:)``, which empties the box when no copy shares it
/// and gives the table a box of its own otherwise; a snapshot keeps the box that matches its rows.
final class KeptValue<Kept: Sendable>: Sendable {
  private let kept = LockedState<Kept?>(nil)
  /// Whether a value is kept, so that forgetting one never worked out (at each insert of a
  /// bulk insert) costs no lock.
  private let filled = Atomic<Bool>(false)

  init() {}

  /// The value kept, or the one `make` works out (under the box's lock, so that readers sharing
  /// the box work it out once), kept.
  func value(_ make: () throws -> Kept) rethrows -> Kept {
    try kept.withLock { kept in
      if let kept { return kept }
      let made = try make()
      kept = made
      filled.store(true, ordering: .releasing)
      return made
    }
  }

  /// Whether a value is kept.
  var isFilled: Bool { filled.load(ordering: .acquiring) }

  /// Forgets the value of `box`: empties it when no copy of the table shares it, and replaces
  /// it with an empty box of its own otherwise.
  static func forget(_ box: inout KeptValue) {
    guard isKnownUniquelyReferenced(&box) else {
      box = KeptValue()
      return
    }
    guard box.isFilled else { return }
    box.kept.withLock { kept in
      kept = nil
      box.filled.store(false, ordering: .releasing)
    }
  }
}
