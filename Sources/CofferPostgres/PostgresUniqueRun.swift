@_spi(Backend) import Coffer

/// Whether a run of updates or upserts of one entity can go as one statement on an entity with
/// unique indexes, and give what the same changes one after another give.
///
/// PostgreSQL checks a unique index as one statement changes each row, in an order of its
/// choosing. A row's new unique values can meet, inside the run, only the new values of
/// another row of the run or the values another row of the run holds until it is changed.
/// When no two rows of the run meet that way, the order does not matter: a row clashes with a
/// row outside the run, which the run does not change, whether it goes first or last.
enum UniqueRun {
  /// Whether no two rows of `rows` (the run, in the table's layout, of distinct ids) take the
  /// same values under a unique index: the half of ``isIndependent(_:stored:schema:)`` that needs
  /// no stored row. The other half the server answers (`PostgresTable.uniqueClashSQL`).
  static func takesDistinctKeys(_ rows: [Row], schema: EntitySchema) -> Bool {
    for index in schema.uniqueIndexes {
      let positions = index.fields.compactMap { schema.position(of: $0) }
      var taken = Set<[Value]>(minimumCapacity: rows.count)
      for row in rows {
        let key = positions.map { row[$0] }
        if key.contains(where: \.isNull) { continue }
        if !taken.insert(key).inserted { return false }
      }
    }
    return true
  }

  /// Whether no row of `rows` (the run, in the table's layout, of distinct ids) takes unique
  /// values that another row of it holds in `stored` (the rows of those ids as stored now) or
  /// takes in `rows`. Rows with a null in an index's fields never clash on it.
  static func isIndependent(_ rows: [Row], stored: [Row], schema: EntitySchema) -> Bool {
    for index in schema.uniqueIndexes {
      let positions = index.fields.compactMap { schema.position(of: $0) }
      // The one id of the run that takes each key.
      var taken: [[Value]: Value] = [:]
      for row in rows {
        let key = positions.map { row[$0] }
        if key.contains(where: \.isNull) { continue }
        if taken.updateValue(row[schema.idPosition], forKey: key) != nil { return false }
      }
      for row in stored {
        let key = positions.map { row[$0] }
        if let id = taken[key], id != row[schema.idPosition] { return false }
      }
    }
    return true
  }
}
