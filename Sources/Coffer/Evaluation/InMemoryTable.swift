/// The rows of one entity held in memory, with its unique indexes, index orders and text
/// indexes kept up to date.
///
/// Part of ``InMemoryTables``; a value type, so a copy is a snapshot.
struct InMemoryTable: Sendable {
  var schema: EntitySchema
  var rows: [Value: Row] = [:]
  /// One map per unique index of the schema: the indexed values to the id that holds them.
  var unique: [[[Value]: Value]]
  let uniquePositions: [[Int]]
  /// The id order, then one order per index of the schema (two indexes on the same fields
  /// share one): every row sorted by the index's fields, then id, so that a query that pins
  /// some of them reads only its range, and one sorted by the next reads only the rows it
  /// returns (see `InMemoryTable+Indexes.swift`). The first, ordered by id alone, serves scans,
  /// pages in id order and ranges of ids without sorting.
  var orders: [OrderedRows]
  /// For each of ``orders``, when its first field holds booleans, integers or UUIDs (values equal
  /// exactly when they hash alike) and is not alone a unique index (nor the id): how many rows
  /// hold each value there, so that counting the rows an equality on that field picks out reads
  /// one entry rather than two paths down the tree.
  var leadingCounts: [[Value: Int]?]
  /// One inverted index per field with a text index (``Index/text(on:)``), kept in step with
  /// the rows by every change, ordered or not.
  var textIndexes: [TextIndex]

  init(schema: EntitySchema) {
    self.schema = schema
    let positions = schema.uniqueIndexes.map { index in index.fields.compactMap { schema.position(of: $0) } }
    self.uniquePositions = positions
    self.unique = Array(repeating: [:], count: positions.count)
    var orderFields: [[Int]] = [[]]
    for index in schema.orderedIndexes {
      let fields = index.fields.compactMap { schema.position(of: $0) }
      guard !fields.isEmpty, fields.count == index.fields.count, !orderFields.contains(fields) else {
        continue
      }
      orderFields.append(fields)
    }
    self.orders = orderFields.map { OrderedRows(fields: $0, idPosition: schema.idPosition) }
    self.leadingCounts = orderFields.map { fields in
      guard let leading = fields.first, leading != schema.idPosition else { return nil }
      let alone = schema.uniqueIndexes.contains { $0.fields == [schema.fields[leading].name] }
      return !alone && [.bool, .int, .uuid].contains(schema.fields[leading].kind) ? [:] : nil
    }
    var textPositions: [Int] = []
    for field in schema.textIndexedFields {
      if let position = schema.position(of: field), !textPositions.contains(position) {
        textPositions.append(position)
      }
    }
    self.textIndexes = textPositions.map { TextIndex(position: $0) }
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

  /// What ``put(_:id:requiring:store:ordered:)`` did.
  enum PutOutcome {
    /// Nothing: the id was stored already (`existed`), or was not, against the presence asked.
    case refused(existed: Bool)
    /// The row is stored; this row was there before, if any.
    case stored(Row?)
  }

  /// Stores `row` under `id` when the id's presence is as `presence` asks and no other row holds
  /// its unique values (which throws ``CofferError/Code/uniqueViolation``), in one access to the
  /// table. `ordered` is as ``put(_:_:ordered:)`` takes it.
  mutating func put(
    _ row: Row, id: Value, requiring presence: Presence, store: String?, ordered: Bool = true
  ) throws -> PutOutcome {
    // An update finds its row's place once and swaps the row there: one hash of the id.
    let place = rows.index(forKey: id)
    switch presence {
    case .absent where place != nil: return .refused(existed: true)
    case .present where place == nil: return .refused(existed: false)
    default: break
    }
    try checkUnique(row, store: store)
    guard let place else { return .stored(put(id, row, ordered: ordered)) }
    let old = rows.values[place]
    rows.values[place] = row
    reindex(id, old: old, new: row, ordered: ordered)
    return .stored(old)
  }

  /// Stores or removes the row with an id, keeping unique indexes in step; returns the row that
  /// was there.
  ///
  /// With `ordered` false the index orders and their counts are left as they were: many rows
  /// added at once go into them together afterwards (``addToOrders(_:)``), and taking such rows
  /// out again before that must leave the orders alone as well.
  @discardableResult
  mutating func put(_ id: Value, _ row: Row?, ordered: Bool = true) -> Row? {
    let old = row.map { rows.updateValue($0, forKey: id) } ?? rows.removeValue(forKey: id)
    reindex(id, old: old, new: row, ordered: ordered)
    return old
  }

  /// Brings the unique indexes and text indexes, and the orders and their counts unless
  /// `ordered` is false, from the row with an id being `old` to its being `row`.
  private mutating func reindex(_ id: Value, old: Row?, new row: Row?, ordered: Bool) {
    for index in textIndexes.indices { textIndexes[index].update(id: id, old: old, new: row) }
    for index in unique.indices {
      if let old, let key = uniqueKey(old, index: index), unique[index][key] == id {
        unique[index][key] = nil
      }
      if let row, let key = uniqueKey(row, index: index) {
        unique[index][key] = id
      }
    }
    guard ordered else { return }
    for order in orders.indices {
      switch (old, row) {
      case (nil, let new?): orders[order].insert(new)
      case (let old?, nil): orders[order].remove(old)
      case (let old?, let new?):
        if orders[order].compare(old, new) == 0 {
          orders[order].replace(old, with: new)
        } else {
          orders[order].remove(old)
          orders[order].insert(new)
        }
      case (nil, nil): break
      }
      if leadingCounts[order] != nil {
        let leading = orders[order].positions[0]
        let (before, after) = (old?[leading], row?[leading])
        if before != after {
          if let before, !before.isNull {
            leadingCounts[order]?[before, default: 0] -= 1
            if leadingCounts[order]?[before] == 0 { leadingCounts[order]?[before] = nil }
          }
          if let after, !after.isNull { leadingCounts[order]?[after, default: 0] += 1 }
        }
      }
    }
  }

  /// Stores the new rows of a large insert without adding them to the index orders, and returns
  /// them for ``addToOrders(_:)``. A row whose id is stored already or whose unique values
  /// another row holds is refused as ``put(_:id:requiring:store:ordered:)`` refuses it; then the
  /// rows stored before it are taken out again (of the rows and unique maps alone, as the orders
  /// never held them) and the error thrown.
  mutating func storeUnordered(_ source: RowSource, reshape: RowReshaper, store: String?) throws -> [Row] {
    var added: [Row] = []
    added.reserveCapacity(source.count)
    do {
      for position in 0..<source.count {
        let row = reshape(try source.row(at: position))
        let id = row[schema.idPosition]
        if case .refused = try put(row, id: id, requiring: .absent, store: store, ordered: false) {
          throw CofferError.idAlreadyStored(entity: schema.name, id: id, store: store)
        }
        added.append(row)
      }
    } catch {
      for row in added.reversed() { put(row[schema.idPosition], nil, ordered: false) }
      throw error
    }
    return added
  }

  /// Adds rows that ``put(_:_:ordered:)`` stored unordered to every index order and count at
  /// once: each order's rows are merged with the new ones, sorted, and laid out leaf by leaf,
  /// which costs less than a descent of each tree per row when the rows are many.
  mutating func addToOrders(_ added: [Row]) {
    guard !added.isEmpty else { return }
    for index in orders.indices {
      let order = orders[index]
      orders[index] = order.merged(with: order.sorted(added))
      guard var counts = leadingCounts[index] else { continue }
      leadingCounts[index] = nil
      let leading = order.positions[0]
      for row in added where !row[leading].isNull { counts[row[leading], default: 0] += 1 }
      leadingCounts[index] = counts
    }
  }

  /// Rebuilds the table for a new schema, migrating every row.
  func evolved(to declared: EntitySchema, store: String?) throws -> InMemoryTable {
    let evolution = try SchemaEvolution(from: schema, to: declared, store: store)
    var table = InMemoryTable(schema: declared)
    var firstClash: (any Error)?
    table.rows.reserveCapacity(rows.count)
    for (id, row) in rows {
      let migrated = evolution.isIdentity ? row : evolution.migrate(row)
      if firstClash == nil {
        do { try table.checkUnique(migrated, store: store) } catch { firstClash = error }
      }
      table.put(id, migrated, ordered: false)
    }
    if let firstClash {
      // Name the row every backend names, not the first one met in hash order.
      guard let clash = UniqueClash.smallest(in: Array(table.rows.values), schema: declared) else {
        throw firstClash
      }
      throw clash.error(entity: declared.name, store: store)
    }
    table.addToOrders(Array(table.rows.values))
    return table
  }
}
