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
  /// Where each entity is in `schemas`, by name, once there are more than
  /// ``scannedEntities``.
  private var entityPlaces: [String: Int] = [:]
  private var entries: [Entry] = []
  /// Where each row's entry is, by id, one dictionary per entity (by its place in `schemas`);
  /// made and kept only once ``indexed`` is true.
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
    // One lookup: an id not seen yet is given the next place as it is looked up.
    let index = Self.settled(&places[entity][id, default: count])
    if index < count {
      entries[index].row = now
    } else {
      entries.append(Entry(entity: entity, id: id, existed: existed, row: now))
    }
  }

  /// The value of a dictionary's entry, through the accessor that inserts its default when the
  /// key is missing.
  @inline(__always) private static func settled(_ place: inout Int) -> Int { place }

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
    places = Array(repeating: [:], count: schemas.count)
    for (position, entry) in entries.enumerated() { places[entry.entity][entry.id] = position }
  }

  /// How many entities a batch changes before their places are found by name rather than by
  /// looking through them (most batches change one or two: no dictionary to make).
  private static let scannedEntities = 8

  private mutating func place(of schema: EntitySchema) -> Int {
    // Batches change one entity for many rows in a row: the last one is checked first.
    if let last = schemas.indices.last, schemas[last].name == schema.name { return last }
    if schemas.count <= Self.scannedEntities {
      if let place = schemas.firstIndex(where: { $0.name == schema.name }) { return place }
    } else if let place = entityPlaces[schema.name] {
      return place
    }
    schemas.append(schema)
    if indexed { places.append([:]) }
    if schemas.count == Self.scannedEntities + 1 {
      for (place, known) in schemas.enumerated() { entityPlaces[known.name] = place }
    } else if schemas.count > Self.scannedEntities + 1 {
      entityPlaces[schema.name] = schemas.count - 1
    }
    return schemas.count - 1
  }

  /// The batch's row changes in the form a backend records (see ``RecordedChanges``), or `nil`
  /// when the batch left every row as it was (a row added and removed again, a delete of an id
  /// not stored): such a batch records nothing.
  public func encoded() -> [UInt8]? { encoded(after: []) }

  /// The batch's row changes as ``encoded()`` gives them, after `prefix` in the same buffer (a
  /// backend that stores something before the payload writes it once), or `nil` when the batch
  /// left every row as it was.
  public func encoded(after prefix: [UInt8]) -> [UInt8]? {
    // Measured first, then written into memory of exactly that size.
    var count = 0
    var size = prefix.count + 1 + ChangePayload.size(ofCount: schemas.count)
    for schema in schemas {
      size += ChangePayload.size(of: schema.name) + ChangePayload.size(ofCount: schema.fields.count)
      for field in schema.fields { size += ChangePayload.size(of: field.name) }
    }
    for entry in entries where entry.existed || entry.row != nil {
      count += 1
      size += ChangePayload.size(ofCount: entry.entity) + 1 + ChangePayload.size(of: entry.id)
      for value in entry.row?.values ?? [] { size += ChangePayload.size(of: value) }
    }
    if count == 0 { return nil }
    size += ChangePayload.size(ofCount: count)
    return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
      guard let base = buffer.baseAddress else { return }
      var writer = ChangePayload.BufferWriter(cursor: UnsafeMutableRawPointer(base))
      prefix.withUnsafeBytes { writer.raw($0) }
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
      initialized = writer.cursor - UnsafeMutableRawPointer(base)
      assert(initialized == size, "the payload's measured size is what is written")
    }
  }
}
