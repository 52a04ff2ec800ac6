@_spi(Backend) import Coffer
import CofferSQL
import PostgresNIO

extension PostgresApplier {
  /// The most numbers one statement of `check(_:)` counts at once.
  static let countsPerStatement = 64

  /// Checks the batch's preconditions inside its transaction. Those a number answers — a count,
  /// or rows read in the id field alone in id order, as the reference rules pin the rows they
  /// delete by id — are counted together, `count(*)` on the server, one statement for up to
  /// ``countsPerStatement`` numbers; the others read the rows they pin. When a number differs,
  /// its precondition reads its rows to say which row changed. A batch with no preconditions
  /// sends nothing.
  func check(_ preconditions: [ChangeSet.Precondition]) async throws {
    var pins: [(filters: [Filter], expected: [Int])?] = []
    var numbers: [(table: PostgresTable, filter: Filter)] = []
    for precondition in preconditions {
      let pin = try counts(pinning: precondition)
      pins.append(pin)
      if let pin {
        let table = try table(precondition.query.entity)
        numbers += pin.filters.map { (table, $0) }
      }
    }
    var answers: [Int] = []
    var start = 0
    while start < numbers.count {
      let end = min(numbers.count, start + Self.countsPerStatement)
      var built = PostgresSQL()
      var columns: [String] = []
      for (table, filter) in numbers[start..<end] {
        built.sql = "(SELECT count(*) FROM \(table.table)"
        try built.appendWhere(filter, table.layout)
        columns.append(built.sql + ")")
      }
      built.sql = "SELECT " + columns.joined(separator: ", ")
      answers += try await counts(built.sql, built.bindings, columns.count)
      start = end
    }
    // In the batch's order, so that the first precondition that fails is the one named.
    var position = 0
    for (precondition, pin) in zip(preconditions, pins) {
      guard let pin else {
        try await check(precondition)
        continue
      }
      let found = Array(answers[position..<position + pin.filters.count])
      position += pin.filters.count
      if found != pin.expected { try await check(precondition) }
    }
  }

  /// The numbers that hold exactly when a precondition holds: `count(*)` of its filter for a
  /// count (its slice applied by the caller: none here); for rows read in the id field alone
  /// in id order, the number of rows its filter selects and of those among the ids it read,
  /// each the number of ids. `nil` for a precondition only its rows can check.
  private func counts(pinning precondition: ChangeSet.Precondition) throws
    -> (filters: [Filter], expected: [Int])?
  {
    let query = precondition.query
    guard query.limit == nil, query.offset == 0 else { return nil }
    switch precondition.expectation {
    case .count(let expected):
      return ([query.filter], [expected])
    case .rows(let rows):
      let table = try table(query.entity)
      guard query.sort.isEmpty, table.readsIDsOnly(query.layout), rows.allSatisfy({ $0.values.count == 1 })
      else {
        return nil
      }
      let ids = rows.map { $0[0] }
      guard Set(ids).count == ids.count, !ids.contains(where: \.isNull) else { return nil }
      if ids.isEmpty { return ([query.filter], [0]) }
      return ([query.filter, query.filter && .isIn(table.schema.idField.name, ids)], [ids.count, ids.count])
    }
  }

  /// Checks one precondition: a count with `count(*)`, never by fetching the rows; rows as the
  /// query selects them now (the ids alone for a query read in the id field alone).
  func check(_ precondition: ChangeSet.Precondition) async throws {
    let query = precondition.query
    if case .count(let expected) = precondition.expectation {
      let table = try table(query.entity)
      let built = try PostgresSQL.count(query.filter, in: table.layout)
      if query.slice(ofCount: try await counted(built.sql, built.bindings)) == expected { return }
    }
    // Also the error of a count that differs: the rows tell which one it names.
    try precondition.verify(try await selected(query), store: store)
    if case .count = precondition.expectation {
      // The transaction reads one snapshot, so the rows agree with the count; should they not,
      // the precondition failed all the same.
      throw ChangeSet.Precondition.conflict(entity: query.entity, id: nil, store: store, what: "changed")
    }
  }

  /// Runs a statement of the batch that answers one number, `count(*)`.
  func counted(_ sql: String, _ binds: PostgresBindings) async throws -> Int {
    try await counts(sql, binds, 1).first ?? 0
  }

  /// Runs a statement of the batch that answers one row of `numbers` counts.
  private func counts(_ sql: String, _ binds: PostgresBindings, _ numbers: Int) async throws -> [Int] {
    var answers = Array(repeating: 0, count: numbers)
    guard let row = try await query(sql, binds).first else { return answers }
    for (position, cell) in row.enumerated() where position < numbers {
      if case .int(let count) = try PostgresValues.read(cell.bytes, as: .int) {
        answers[position] = Int(count)
      }
    }
    return answers
  }
}
