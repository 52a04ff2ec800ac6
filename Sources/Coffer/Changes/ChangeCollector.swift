/// Gathers what one batch does to each row, inside the backend's write transaction, for the
/// change feed: the backend tells it each row it stores and each id it removes, as it does so.
///
/// A row changed several times in a batch is kept once, at the place of its first change, with
/// its effect: whether it was stored before the batch and what it holds after. A backend makes
/// one per batch and drops it when the batch fails, so a failed batch records nothing.
@_spi(Backend) public struct ChangeCollector: Sendable {
  private struct Entry {
    var entity: Int
    var id: Value
    /// Whether the row was stored before the batch.
    var existed: Bool
    /// The row after the batch's changes so far; `nil` when removed.
    var row: Row?
  }

  private var schemas: [EntitySchema] = []
  private var entityPlaces: [String: Int] = [:]
  private var entries: [Entry] = []
  /// Where each row's entry is, by id, one dictionary per entity (by its place in `schemas`);
  /// kept only once ``indexed`` is true.
  private var places: [[Value: Int]] = []
  /// Whether ``places`` holds every entry. A batch that so far has only added rows that were not
  /// stored cannot have touched an id twice (a second add of an id needs a removal between), so
  /// until it does something else its entries are appended without hashing their ids: a bulk
  /// insert hashes nothing.
  private var indexed = false

  /// Nothing gathered.
  public init() {}

  /// Whether no row was changed.
  public var isEmpty: Bool { entries.isEmpty }

  /// A row was stored in an entity whose rows have `schema`'s layout: added when `existed` is
  /// false, replacing the stored row otherwise.
  public mutating func stored(_ row: Row, in schema: EntitySchema, existed: Bool) {
    if !existed && !indexed {
      entries.append(Entry(entity: place(of: schema), id: row[schema.idPosition], existed: false, row: row))
      return
    }
    touched(row[schema.idPosition], in: schema, existed: existed, now: row)
  }

  /// The stored row with an id was removed.
  public mutating func removed(id: Value, from schema: EntitySchema) {
    touched(id, in: schema, existed: true, now: nil)
  }

  /// A row was changed: it was stored before the batch when `existed` is true, and holds `now`
  /// after it (`nil`: removed). For a backend that learns what each row holds only once the
  /// batch is done; only the first call for a row decides `existed`.
  public mutating func touched(_ id: Value, in schema: EntitySchema, existed: Bool, now: Row?) {
    if !indexed { index() }
    let entity = place(of: schema)
    let count = entries.count
    let index = places[entity][id, default: count]
    if index < count {
      entries[index].row = now
    } else {
      places[entity][id] = count
      entries.append(Entry(entity: entity, id: id, existed: existed, row: now))
    }
  }

  /// A migration step rewrote a row of an entity stored with `before`'s schema into `after`
  /// (the entity's schema from now on, possibly under another name), or removed it (`nil`).
  /// Nothing when the row is as it was: the same values under the same fields.
  public mutating func rewrote(_ row: Row, of before: EntitySchema, as output: Row?, of after: EntitySchema) {
    let id = row[before.idPosition]
    guard let output else {
      // Under the entity's new schema when it keeps its name: a batch holds one per entity.
      removed(id: id, from: before.name == after.name ? after : before)
      return
    }
    if before.name != after.name {
      removed(id: id, from: before)
      stored(output, in: after, existed: false)
      return
    }
    if output == row, before.fields == after.fields { return }
    stored(output, in: after, existed: true)
  }

  /// Indexes the entries appended so far, and every later one.
  private mutating func index() {
    indexed = true
    for (position, entry) in entries.enumerated() { places[entry.entity][entry.id] = position }
  }

  private mutating func place(of schema: EntitySchema) -> Int {
    // Batches change one entity for many rows in a row: the last one is checked first.
    if let last = schemas.indices.last, schemas[last].name == schema.name { return last }
    if let place = entityPlaces[schema.name] { return place }
    entityPlaces[schema.name] = schemas.count
    schemas.append(schema)
    places.append([:])
    return schemas.count - 1
  }

  /// The batch's row changes in the form a backend records (see ``RecordedChanges``), or `nil`
  /// when the batch left every row as it was (a row added and removed again, a delete of an id
  /// not stored): such a batch records nothing.
  public func encoded() -> [UInt8]? {
    var writer = ChangePayload.Writer()
    var count = 0
    for entry in entries where entry.existed || entry.row != nil { count += 1 }
    if count == 0 { return nil }
    // About nine bytes a value, strings aside: one reservation instead of a dozen doublings.
    let widest = schemas.map(\.fields.count).max() ?? 0
    writer.bytes.reserveCapacity(64 + count * (widest + 2) * 9)
    writer.byte(ChangePayload.version)
    writer.count(schemas.count)
    for schema in schemas {
      writer.string(schema.name)
      writer.count(schema.fields.count)
      for field in schema.fields { writer.string(field.name) }
    }
    writer.count(count)
    for entry in entries where entry.existed || entry.row != nil {
      writer.count(entry.entity)
      if let row = entry.row {
        writer.byte(entry.existed ? ChangePayload.update : ChangePayload.insert)
        writer.value(entry.id)
        for value in row.values { writer.value(value) }
      } else {
        writer.byte(ChangePayload.delete)
        writer.value(entry.id)
      }
    }
    return writer.bytes
  }
}
