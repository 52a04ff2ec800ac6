@_spi(Backend) import Coffer
import Logging
import PostgresNIO

/// Runs statements as server-side prepared statements, parsed and planned once per connection
/// and query shape, then only bound and executed.
///
/// postgres-nio names a prepared statement by a type (`PostgresPreparedStatement`'s static
/// `name` and `sql`), while Coffer's statements are text made at run time. So the process has a
/// fixed set of statement types, ``slotCount`` of them, and gives each new statement text the
/// next free one for the rest of the process: a text keeps its name, so every connection that
/// prepared it runs the same statement. Text made after every slot is taken runs as an unnamed
/// statement (parsed each time): a process that makes more shapes than that (only test suites
/// with thousands of scratch schemas do) stays correct, and slower.
enum PostgresStatements {
  /// How many statement texts the process prepares.
  static let slotCount = 1024

  /// The statement text of each slot given out, and the slot of each text.
  private static let registry = LockedState(Registry())

  private struct Registry {
    var texts: [String] = []
    var slots: [String: Int] = [:]
  }

  /// The slot of a statement text, given out on first use; `nil` when every slot is taken.
  static func slot(for sql: String) -> Int? {
    registry.withLock { registry in
      if let slot = registry.slots[sql] { return slot }
      guard registry.texts.count < slotCount else { return nil }
      registry.texts.append(sql)
      registry.slots[sql] = registry.texts.count - 1
      return registry.texts.count - 1
    }
  }

  /// Makes every statement text that holds `fragment` (a table's quoted name) take a new slot
  /// when it is next run, so that no connection runs a statement it prepared for a table that
  /// was dropped, recreated or renamed since: PostgreSQL refuses a prepared statement whose
  /// result changed type, and keeps the parameter types it inferred when it was prepared.
  static func retire(mentioning fragment: String) {
    registry.withLock { registry in
      for text in registry.slots.keys where text.contains(fragment) { registry.slots[text] = nil }
    }
  }

  /// The text of a slot given out.
  static func text(of slot: Int) -> String {
    registry.withLock { $0.texts[slot] }
  }

  /// Runs a statement on a connection and hands over each row as it arrives.
  static func run(
    _ sql: String, _ binds: PostgresBindings, on connection: PostgresConnection, logger: Logger,
    _ visit: (PostgresRow) throws -> Void
  ) async throws {
    guard let slot = slot(for: sql) else {
      for try await row in try await connection.send(
        PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
      {
        try visit(row)
      }
      return
    }
    let statement = slotTypes[slot].init(bindings: binds)
    for try await row in try await connection.send(statement, logger: logger) {
      try visit(row)
    }
  }

  /// Runs a statement and returns its rows.
  static func rows(
    _ sql: String, _ binds: PostgresBindings, on connection: PostgresConnection, logger: Logger
  ) async throws -> [PostgresRow] {
    var rows: [PostgresRow] = []
    try await run(sql, binds, on: connection, logger: logger) { rows.append($0) }
    return rows
  }

  /// One statement type per slot: `Slot<A, B, C>` for the slot whose base-16 digits are A, B, C.
  private static let slotTypes: [any SlotStatement.Type] = {
    let digits: [any SlotDigit.Type] = [
      D0.self, D1.self, D2.self, D3.self, D4.self, D5.self, D6.self, D7.self, D8.self, D9.self, DA.self,
      DB.self,
      DC.self, DD.self, DE.self, DF.self,
    ]
    func slot<A: SlotDigit, B: SlotDigit, C: SlotDigit>(_: A.Type, _: B.Type, _: C.Type)
      -> any SlotStatement.Type
    {
      Slot<A, B, C>.self
    }
    var types: [any SlotStatement.Type] = []
    types.reserveCapacity(slotCount)
    for a in digits {
      for b in digits {
        for c in digits where types.count < slotCount {
          types.append(slot(a, b, c))
        }
      }
    }
    return types
  }()
}

/// A prepared statement of one slot: its name is the slot's, its text the text given the slot.
protocol SlotStatement: PostgresPreparedStatement where Row == PostgresRow {
  init(bindings: PostgresBindings)
}

/// One base-16 digit of a slot number, as a type.
protocol SlotDigit { static var value: Int { get } }

private enum D0: SlotDigit { static let value = 0 }
private enum D1: SlotDigit { static let value = 1 }
private enum D2: SlotDigit { static let value = 2 }
private enum D3: SlotDigit { static let value = 3 }
private enum D4: SlotDigit { static let value = 4 }
private enum D5: SlotDigit { static let value = 5 }
private enum D6: SlotDigit { static let value = 6 }
private enum D7: SlotDigit { static let value = 7 }
private enum D8: SlotDigit { static let value = 8 }
private enum D9: SlotDigit { static let value = 9 }
private enum DA: SlotDigit { static let value = 10 }
private enum DB: SlotDigit { static let value = 11 }
private enum DC: SlotDigit { static let value = 12 }
private enum DD: SlotDigit { static let value = 13 }
private enum DE: SlotDigit { static let value = 14 }
private enum DF: SlotDigit { static let value = 15 }

private struct Slot<A: SlotDigit, B: SlotDigit, C: SlotDigit>: SlotStatement {
  static var number: Int { A.value * 256 + B.value * 16 + C.value }
  static var name: String { "coffer_\(number)" }
  static var sql: String { PostgresStatements.text(of: number) }

  let bindings: PostgresBindings

  init(bindings: PostgresBindings) { self.bindings = bindings }

  func makeBindings() -> PostgresBindings { bindings }

  func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}
