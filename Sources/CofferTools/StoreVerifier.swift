@_spi(Backend) import Coffer

/// What ``Store/verify()`` found: the entities it read and every problem, empty when the store
/// is whole.
public struct VerifyReport: Sendable, Hashable, Codable {
  /// One entity read in full.
  public struct EntityCheck: Sendable, Hashable, Codable {
    /// The entity.
    public var entity: String
    /// The rows a full scan read.
    public var rows: Int
    /// The indexes whose ordered reads were compared with the full scan.
    public var indexesChecked: Int
  }

  /// The store checked (its name, without secrets).
  public var store: String
  /// The entities read, sorted by name.
  public var entities: [EntityCheck] = []
  /// Every problem found: the backend's own (``StorageInspecting/checkStorage()``) first, then
  /// those the shared checks found, entity by entity.
  public var problems: [IntegrityProblem] = []

  /// Whether nothing is wrong.
  public var isClean: Bool { problems.isEmpty }
  /// The rows read over every entity.
  public var rows: Int { entities.reduce(0) { $0 + $1.rows } }
}

extension Store {
  /// Checks the store's integrity without changing it, and reports every problem found.
  ///
  /// First the backend checks its own structures (``StorageInspecting/checkStorage()``: SQLite's
  /// `integrity_check`, a walk of LMDB's indexes, PostgreSQL's constraints, …). Then, the same
  /// for every backend, each entity is read in full — in one snapshot when the backend has
  /// ``SnapshotReading`` — and checked:
  /// - every value reads back, of its field's kind, and non-null where the field is required;
  /// - ids are present and each stored once, and every unique index holds;
  /// - ``StorageBackend/count(_:)`` agrees with the rows read;
  /// - a read ordered by each index's fields returns the same rows as the full scan, in
  ///   order — so an index out of step with its rows shows.
  ///
  /// Problems name entity, id and field, never another stored value. Reading a whole store
  /// takes as long as an export.
  ///
  /// - Parameter progress: Called as each entity's full read starts and ends and every thousand
  ///   rows or so between, with the rows read so far out of every entity's count.
  /// - Throws: The backend's error when it cannot read at all (a closed store, a lost server).
  public func verify(progress: (@Sendable (RowProgress) -> Void)? = nil) async throws -> VerifyReport {
    var report = VerifyReport(store: backend.name)
    if let inspecting = backend as? any StorageInspecting {
      report.problems = try await rethrowing { try await inspecting.checkStorage() }
    }
    let schemas = try await storedSchemas(named: nil)
    try await withRowReader { reader in
      var counts: [Int] = []
      for schema in schemas { counts.append(try await reader.count(of: schema)) }
      var counter = RowProgressCounter(totalRows: counts.reduce(0, +), report: progress)
      for (schema, counted) in zip(schemas, counts) {
        var check = EntityVerifier(schema: schema)
        counter.start(schema.name, rows: counted)
        try await check.run(reader, counted: counted, counter: &counter)
        counter.endEntity()
        report.entities.append(
          VerifyReport.EntityCheck(
            entity: schema.name, rows: check.rows, indexesChecked: check.indexesChecked))
        report.problems += check.problems
      }
    }
    return report
  }
}

/// The checks ``Store/verify()`` makes of one entity.
struct EntityVerifier {
  let schema: EntitySchema
  private(set) var rows = 0
  private(set) var indexesChecked = 0
  private(set) var problems: [IntegrityProblem] = []
  /// The most problems kept per entity: a damaged store could otherwise report millions.
  static let problemLimit = 100
  private var problemsSeen = 0

  init(schema: EntitySchema) { self.schema = schema }

  /// Checks the entity, whose rows a count in the same snapshot gave as `counted`, counting the
  /// rows of the full read into `counter`.
  mutating func run(_ reader: RowReader, counted: Int, counter: inout RowProgressCounter) async throws {
    let scan = try await fullScan(reader, counter: &counter)
    if counted != rows {
      note(nil, nil, "A count of every row gives \(counted), but a full read returned \(rows) rows.")
    }
    // A text index holds words, which no read in its order can be compared with.
    for index in schema.orderedIndexes {
      try await compare(index: index, with: scan, reader)
    }
    if problemsSeen > Self.problemLimit {
      problems.append(
        IntegrityProblem(
          entity: schema.name,
          "\(problemsSeen - Self.problemLimit) more problems of this entity are not listed."))
    }
  }

  /// Reads every row in id order: each value, the ids' order and uniqueness, and the unique
  /// indexes; returns the ids it saw, for comparing index-ordered reads with them.
  private mutating func fullScan(_ reader: RowReader, counter: inout RowProgressCounter) async throws -> IDSet
  {
    let schema = self.schema
    var query = RowReader.all(of: schema)
    query.sort = [Sort(schema.idField.name)]
    let uniques = schema.uniqueIndexes.map { index in
      (index: index, positions: index.fields.compactMap { schema.position(of: $0) })
    }
    var holders = Array(repeating: [[Value]: Value](), count: uniques.count)
    var previous: Value?
    var ids = IDSet()
    var found: [IntegrityProblem] = []
    var rows = 0
    try await reader.readReleasing(query) { fields in
      rows += 1
      counter.add(1)
      let row: Row
      do {
        row = try Row(fields)
      } catch {
        found.append(
          IntegrityProblem(
            entity: schema.name, id: try? fields.value(at: schema.idPosition),
            "A row cannot be read: \(Self.reason(error))"))
        return
      }
      let id = row[schema.idPosition]
      for (position, field) in schema.fields.enumerated() {
        let value = row[position]
        if value.isNull {
          if !field.isOptional {
            found.append(
              IntegrityProblem(entity: schema.name, id: id, field: field.name, "A required field holds null.")
            )
          }
        } else if value.kind != field.kind {
          found.append(
            IntegrityProblem(
              entity: schema.name, id: id, field: field.name,
              "The field holds a value of kind \(value.kind?.rawValue ?? "null") where its schema says "
                + "\(field.kind.rawValue)."))
        }
      }
      if id.isNull { return }
      if let previous, ValueOrder.compare(previous, id) >= 0 {
        found.append(
          IntegrityProblem(
            entity: schema.name, id: id,
            ValueOrder.compare(previous, id) == 0
              ? "The id is stored more than once." : "A read in id order returned this id out of order."))
      }
      previous = id
      ids.insert(id)
      for (number, unique) in uniques.enumerated() {
        let key = unique.positions.map { row[$0] }
        if key.contains(where: \.isNull) { continue }
        if let other = holders[number].updateValue(id, forKey: key) {
          found.append(
            IntegrityProblem(
              entity: schema.name, id: id, field: unique.index.name,
              "The row has the same values of this unique index as \(schema.name) \(other)."))
        }
      }
    }
    self.rows = rows
    for problem in found { note(problem) }
    return ids
  }

  /// Reads the rows in the order of an index's fields and checks that they are the full
  /// scan's rows, in that order.
  private mutating func compare(index: Index, with scan: IDSet, _ reader: RowReader) async throws {
    let positions = index.fields.compactMap { schema.position(of: $0) }
    guard positions.count == index.fields.count, positions.allSatisfy({ schema.fields[$0].kind.isOrdered })
    else { return }
    indexesChecked += 1
    var query = RowReader.all(of: schema)
    query.sort = index.fields.map { Sort($0) }
    var seen = IDSet()
    var previous: [Value]?
    var outOfOrder: Value?
    let idPosition = schema.idPosition
    try await reader.readReleasing(query) { fields in
      let key = try positions.map { try fields.value(at: $0) }
      let id = try fields.value(at: idPosition)
      if let previous, outOfOrder == nil, Self.compare(previous, key) > 0 { outOfOrder = id }
      previous = key
      seen.insert(id)
    }
    if let outOfOrder {
      note(
        outOfOrder, index.name,
        "A read in the order of this index returned the row out of order: the index and the rows disagree.")
    }
    if seen != scan {
      note(
        nil, index.name,
        "A read in the order of this index returned \(seen.count) rows where a full read returned "
          + "\(scan.count), or other rows: the index and the rows disagree.")
    }
  }

  private static func compare(_ lhs: [Value], _ rhs: [Value]) -> Int {
    for (left, right) in zip(lhs, rhs) {
      let order = ValueOrder.compare(left, right)
      if order != 0 { return order }
    }
    return 0
  }

  private mutating func note(_ id: Value?, _ field: String?, _ message: String) {
    note(IntegrityProblem(entity: schema.name, id: id, field: field, message))
  }

  private mutating func note(_ problem: IntegrityProblem) {
    problemsSeen += 1
    if problemsSeen <= Self.problemLimit { problems.append(problem) }
  }

  /// An error's message without the store's name (the report names the store once).
  static func reason(_ error: any Error) -> String {
    (error as? CofferError)?.message ?? "\(type(of: error))"
  }
}

/// An order-independent summary of a set of ids: their number and the wrapping sum of their
/// hashes, which is all comparing an index-ordered read with the full scan needs, in constant
/// memory.
struct IDSet: Equatable {
  private(set) var count = 0
  private var sum: UInt64 = 0

  mutating func insert(_ id: Value) {
    var hasher = SipHasher(key0: RowDigester.key0, key1: RowDigester.key1, wide: false)
    RowDigester.encode(id, into: &hasher)
    sum &+= hasher.finalize64()
    count += 1
  }
}
