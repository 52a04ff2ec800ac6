/// The rows of one entity held in memory, with its unique indexes and equality lookups kept up
/// to date.
///
/// Part of ``InMemoryTables``; a value type, so a copy is a snapshot.
struct InMemoryTable: Sendable {
  var schema: EntitySchema
  var rows: [Value: Row] = [:]
  /// One map per unique index of the schema: the indexed values to the id that holds them.
  var unique: [[[Value]: Value]]
  let uniquePositions: [[Int]]
  /// One map per field that leads an index and whose values are equal exactly when they hash
  /// alike (bools, integers, strings, UUIDs): each value to the ids of the rows holding it, so
  /// an equality filter on the field reads only those rows instead of every row (and, for a
  /// large bucket, to the orders its rows were read in: `InMemoryTable+BucketOrder.swift`).
  var lookups: [[Value: LookupBucket]]
  /// The field position each of ``lookups`` covers.
  let lookupPositions: [Int]
  /// For each of ``lookups``, whether its field alone is unique, so that no bucket ever holds
  /// more than one id, nor orders to keep (see `InMemoryTable+BucketOrder.swift`).
  let lookupIsUnique: [Bool]
  /// The ids in ascending order, sorted at the first read that needs them and kept until the
  /// table gains an id: replacing a row leaves the order as it was, and a removed id stays in
  /// it, skipped by the walks, which look each id up (see `InMemoryTable+IDOrder.swift`).
  var idOrder = KeptValue<[Value]>()
  /// Every row in id order as the last full read gathered them, kept until any row changes, so
  /// that reading a whole unchanged table again looks no id up.
  var scanOrder = KeptValue<[Row]>()

  init(schema: EntitySchema) {
    self.schema = schema
    let positions = schema.uniqueIndexes.map { index in index.fields.compactMap { schema.position(of: $0) } }
    self.uniquePositions = positions
    self.unique = Array(repeating: [:], count: positions.count)
    var leading: [Int] = []
    for index in schema.indexes {
      guard let first = index.fields.first, let position = schema.position(of: first),
        position != schema.idPosition, !leading.contains(position),
        [.bool, .int, .string, .uuid].contains(schema.fields[position].kind)
      else { continue }
      leading.append(position)
    }
    self.lookupPositions = leading
    self.lookupIsUnique = leading.map { position in
      schema.uniqueIndexes.contains { $0.fields == [schema.fields[position].name] }
    }
    self.lookups = Array(repeating: [:], count: leading.count)
  }

  /// The rows that can match `filter`, when an equality (or `isIn`) on a looked-up field narrows
  /// them; `nil` when every row must be tested. Callers still test each row against the whole
  /// filter.
  func candidates(for filter: Filter) -> [Row]? {
    switch filter {
    case .compare(let field, .equal, let value) where !value.isNull:
      guard let lookup = lookup(of: field) else { return nil }
      return (lookups[lookup][value]?.ids ?? []).compactMap { rows[$0] }
    case .isIn(let field, let values) where !values.contains(where: \.isNull):
      guard let lookup = lookup(of: field) else { return nil }
      var ids = Set<Value>()
      for value in Set(values) { ids.formUnion(lookups[lookup][value]?.ids ?? []) }
      return ids.compactMap { rows[$0] }
    case .and(let parts):
      return parts.lazy.compactMap { candidates(for: $0) }.first
    default:
      return nil
    }
  }

  /// How many rows ``candidates(for:)`` would return (the same lookup, before the rest of the
  /// filter is tested); `nil` when it returns `nil`.
  func candidateCount(for filter: Filter) -> Int? {
    switch filter {
    case .compare(let field, .equal, let value) where !value.isNull:
      guard let lookup = lookup(of: field) else { return nil }
      return lookups[lookup][value]?.ids.count ?? 0
    case .isIn(let field, let values) where !values.contains(where: \.isNull):
      guard let lookup = lookup(of: field) else { return nil }
      return Set(values).reduce(0) { $0 + (lookups[lookup][$1]?.ids.count ?? 0) }
    case .and(let parts):
      return parts.lazy.compactMap { candidateCount(for: $0) }.first
    default:
      return nil
    }
  }

  func lookup(of field: String) -> Int? {
    guard !lookupPositions.isEmpty, let position = schema.position(of: field) else { return nil }
    return lookupPositions.firstIndex(of: position)
  }

  /// The key a row has in a unique index, or `nil` when any of its fields is null (exempt).
  func uniqueKey(_ row: Row, index: Int) -> [Value]? {
    var key: [Value] = []
    key.reserveCapacity(uniquePositions[index].count)
    for position in uniquePositions[index] {
      let value = row[position]
      if value.isNull { return nil }
      key.append(value)
    }
    return key
  }

  /// Throws if storing `row` would give it the same unique-index values as another row.
  func checkUnique(_ row: Row, store: String?) throws {
    let id = row[schema.idPosition]
    for index in unique.indices {
      guard let key = uniqueKey(row, index: index), let holder = unique[index][key], holder != id else {
        continue
      }
      let fields = schema.uniqueIndexes[index].fields
      throw CofferError(
        .uniqueViolation,
        "\(schema.name) \(id) would have the same \(fields.joined(separator: ", ")) as \(schema.name) \(holder), "
          + "but \(fields.count == 1 ? "that field is" : "those fields are") unique. Nothing in the batch was applied.",
        store: store, entity: schema.name, id: id, field: fields.joined(separator: ","))
    }
  }

  /// Whether a row's id must be stored already: an insert's must not, an update's must.
  enum Presence {
    case absent, present, either
  }

  /// What ``put(_:id:requiring:store:)`` did.
  enum PutOutcome {
    /// Nothing: the id was stored already (`existed`), or was not, against the presence asked.
    case refused(existed: Bool)
    /// The row is stored; this row was there before, if any.
    case stored(Row?)
  }

  /// Stores `row` under `id` when the id's presence is as `presence` asks and no other row holds
  /// its unique values (which throws ``CofferError/Code/uniqueViolation``), in one access to the
  /// table.
  mutating func put(_ row: Row, id: Value, requiring presence: Presence, store: String?) throws -> PutOutcome
  {
    let exists = rows[id] != nil
    switch presence {
    case .absent where exists: return .refused(existed: true)
    case .present where !exists: return .refused(existed: false)
    default: break
    }
    try checkUnique(row, store: store)
    return .stored(put(id, row))
  }

  /// Stores or removes the row with an id, keeping unique indexes in step; returns the row that
  /// was there.
  @discardableResult
  mutating func put(_ id: Value, _ row: Row?) -> Row? {
    let old = row.map { rows.updateValue($0, forKey: id) } ?? rows.removeValue(forKey: id)
    scanChanged()
    if old == nil, row != nil {
      rowsChanged()
    } else if row == nil, old != nil {
      idRemoved()
    }
    for lookup in lookups.indices {
      let position = lookupPositions[lookup]
      let before = old?[position]
      let after = row?[position]
      if before == after {
        // The bucket keeps its ids, but the row's other fields may sort it elsewhere.
        if let after, !after.isNull, !lookupIsUnique[lookup] { lookups[lookup][after]?.rowsChanged() }
        continue
      }
      if let before, !before.isNull {
        lookups[lookup][before]?.remove(id)
        if lookups[lookup][before]?.ids.isEmpty == true { lookups[lookup][before] = nil }
      }
      if let after, !after.isNull { lookups[lookup][after, default: LookupBucket()].add(id) }
    }
    for index in unique.indices {
      if let old, let key = uniqueKey(old, index: index), unique[index][key] == id {
        unique[index][key] = nil
      }
      if let row, let key = uniqueKey(row, index: index) {
        unique[index][key] = id
      }
    }
    return old
  }

  /// Rebuilds the table for a new schema, migrating every row.
  func evolved(to declared: EntitySchema, store: String?) throws -> InMemoryTable {
    let evolution = try SchemaEvolution(from: schema, to: declared, store: store)
    var table = InMemoryTable(schema: declared)
    var firstClash: (any Error)?
    for (id, row) in rows {
      let migrated = evolution.isIdentity ? row : evolution.migrate(row)
      if firstClash == nil {
        do { try table.checkUnique(migrated, store: store) } catch { firstClash = error }
      }
      table.put(id, migrated)
    }
    if let firstClash {
      // Name the row every backend names, not the first one met in hash order.
      guard let clash = UniqueClash.smallest(in: Array(table.rows.values), schema: declared) else {
        throw firstClash
      }
      throw clash.error(entity: declared.name, store: store)
    }
    return table
  }
}
