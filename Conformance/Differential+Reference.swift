@_spi(Backend) import Coffer
import Foundation

/// What one step gave: a summary, rows, a count, or an error by code, entity, id and field.
enum DifferentialOutcome: Sendable {
  case summary(ChangeSummary)
  case rows([Row])
  case count(Int)
  /// The groups of an aggregate.
  case groups([AggregateGroup<Value, Value>])
  case prepared
  /// An error; its message is shown, never compared.
  case error(
    code: String, entity: String?, id: String?, field: String?, message: String = "", idValue: Value? = nil)
  case unexpected(String)
  /// A race of a prepare and a batch: what each gave, then every row of the entity by id.
  indirect case race(prepare: DifferentialOutcome, batch: DifferentialOutcome, rows: DifferentialOutcome)

  init(_ error: any Error) {
    if let error = error as? CofferError {
      let texts = [error.description, error.message, error.underlying.map { "\($0)" } ?? ""]
      if texts.contains(where: { $0.contains(DifferentialValues.secret) }) {
        self = .unexpected(
          "a \(error.code) error shows a stored value: "
            + error.description.replacingOccurrences(of: DifferentialValues.secret, with: "<stored value>"))
        return
      }
      self = .error(
        code: error.code.name, entity: error.entity, id: error.id, field: error.field, message: error.message,
        idValue: error.idValue)
    } else {
      self = .unexpected("\(error)")
    }
  }

  var isError: Bool {
    if case .error = self { return true }
    return false
  }

  /// Equal bit for bit: doubles by bit pattern (so -0.0 is not 0.0), strings by UTF-8, dates by
  /// microsecond.
  func same(as other: DifferentialOutcome) -> Bool {
    switch (self, other) {
    case (.summary(let a), .summary(let b)): a == b
    case (.rows(let a), .rows(let b)):
      a.count == b.count
        && zip(a, b).allSatisfy { x, y in
          x.count == y.count && zip(x.values, y.values).allSatisfy(Self.exactlyEqual)
        }
    case (.count(let a), .count(let b)): a == b
    case (.groups(let a), .groups(let b)):
      a.count == b.count
        && zip(a, b).allSatisfy { x, y in
          Self.exactlyEqual(x.key, y.key) && Self.aggregateEqual(x.value, y.value)
        }
    case (.prepared, .prepared): true
    case (
      .error(let c1, let e1, let i1, let f1, _, let v1), .error(let c2, let e2, let i2, let f2, _, let v2)
    ):
      // The id's rendering always; its value too when both errors carry it.
      c1 == c2 && e1 == e2 && i1 == i2 && f1 == f2
        && (v1 == nil || v2 == nil || v1.flatMap { a in v2.map { b in Self.exactlyEqual(a, b) } } == true)
    case (.unexpected(let a), .unexpected(let b)): a == b
    case (.race(let p1, let b1, let r1), .race(let p2, let b2, let r2)):
      p1.same(as: p2) && b1.same(as: b2) && r1.same(as: r2)
    default: false
    }
  }

  static func exactlyEqual(_ a: Value, _ b: Value) -> Bool {
    switch (a, b) {
    case (.double(let x), .double(let y)): x.bitPattern == y.bitPattern
    default: a == b
    }
  }

  /// Equal as aggregates: exactly, or for doubles (averages of integers whose sum leaves Int64)
  /// within ``Aggregation/relativeTolerance`` of the larger.
  static func aggregateEqual(_ a: Value, _ b: Value) -> Bool {
    if exactlyEqual(a, b) { return true }
    guard case .double(let x) = a, case .double(let y) = b, x.isFinite, y.isFinite else { return false }
    return abs(x - y) <= Aggregation.relativeTolerance * max(abs(x), abs(y))
  }

  func rendered(_ schema: EntitySchema?) -> String {
    switch self {
    case .summary(let s): "applied (inserted \(s.inserted), updated \(s.updated), deleted \(s.deleted))"
    case .rows(let rows):
      "\(rows.count) rows ["
        + rows.prefix(12).map { DifferentialRendering.row($0, schema) }.joined(separator: ", ")
        + (rows.count > 12 ? ", …" : "") + "]"
    case .count(let count): "count \(count)"
    case .groups(let groups):
      "\(groups.count) groups ["
        + groups.prefix(12).map {
          "\(DifferentialRendering.value($0.key)): \(DifferentialRendering.value($0.value))"
        }.joined(separator: ", ") + (groups.count > 12 ? ", …" : "") + "]"
    case .prepared: "prepared"
    case .error(let code, let entity, let id, let field, let message, _):
      "\(code) error (entity \(entity.map(DifferentialRendering.name) ?? "not named"), id \(id ?? "not named"), "
        + "field \(field.map(DifferentialRendering.name) ?? "not named"))"
        + (message.isEmpty ? "" : " \u{201C}\(message.prefix(240))\u{201D}")
    case .unexpected(let text): "unexpected error: \(text)"
    case .race(let prepare, let batch, let rows):
      "prepare: \(prepare.rendered(schema)); batch: \(batch.rendered(schema)); then \(rows.rendered(schema))"
    }
  }
}

/// The reference: ``InMemoryTables`` behind the checks ``Store`` makes before a backend sees a
/// row or query, so that it answers each step as a correct backend under a ``Store`` must.
struct DifferentialReference: Sendable {
  var tables = InMemoryTables(storeName: "reference")
  /// The schemas prepared through this store, as ``Store/schema(of:)`` gives them.
  var prepared: [String: EntitySchema] = [:]

  /// The schemas a reopened store is prepared with: those stored, in name order.
  var stored: [EntitySchema] {
    tables.schemas.values.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
  }

  func schema(_ entity: String) throws -> EntitySchema {
    guard let schema = prepared[entity] else {
      throw CofferError(.unknownEntity, "Entity '\(entity)' was not prepared.", entity: entity)
    }
    return schema
  }

  mutating func prepare(_ schemas: [EntitySchema]) throws {
    try tables.prepare(schemas)
    for schema in schemas { prepared[schema.name] = schema }
  }

  /// ``Store/apply(_:)``: every operation checked in order, then the batch applied atomically.
  mutating func apply(_ operations: [ChangeSet.Operation]) throws -> ChangeSummary {
    if operations.isEmpty { return ChangeSummary() }
    var checked: [ChangeSet.Operation] = []
    for operation in operations {
      let schema = try schema(operation.entity)
      checked.append(try QueryValidator.validate(operation, schema: schema))
    }
    return try tables.apply(ChangeSet(checked))
  }

  /// A bulk insert: rows checked and inserted one after another, the first failing row deciding
  /// the error, all or nothing.
  mutating func bulkInsert(_ entity: String, _ rows: [Row]) throws -> ChangeSummary {
    let schema = try schema(entity)
    var copy = tables
    for row in rows {
      _ = try copy.apply(
        ChangeSet([.insert(entity: entity, row: try QueryValidator.validate(row, schema: schema))]))
    }
    tables = copy
    return ChangeSummary(inserted: rows.count)
  }

  func fetch(_ query: Query) throws -> [Row] {
    try tables.fetch(QueryValidator.validate(query, schema: schema(query.entity)))
  }

  func count(_ query: Query) throws -> Int {
    let checked = try QueryValidator.validate(query, schema: schema(query.entity))
    return checked.slice(ofCount: try tables.count(checked))
  }

  /// The core's reference evaluator over the rows the aggregation's filter selects.
  func aggregate(_ aggregation: Aggregation) throws -> [AggregateGroup<Value, Value>] {
    let schema = try schema(aggregation.query.entity)
    let checked = try QueryValidator.validate(aggregation, schema: schema)
    return try AggregateEvaluator.evaluate(checked, schema: schema, rows: try tables.fetch(checked.query))
  }

  func get(_ entity: String, _ ids: [Value]) throws -> [Row] {
    let schema = try schema(entity)
    let checked = try ids.map { try QueryValidator.validate(id: $0, schema: schema) }
    _ = try tables.count(Query(entity: entity))  // An unknown entity fails here, as in a store.
    return checked.compactMap { tables.row(of: entity, id: $0) }
  }

  /// Every row of an entity, by id.
  func everyRow(_ entity: String) -> DifferentialOutcome {
    do {
      return .rows(try fetch(Query(entity: entity, sort: [])))
    } catch {
      return DifferentialOutcome(error)
    }
  }

  /// Runs one step; a race is answered as if the batch ran wholly before the prepare.
  mutating func run(_ step: DifferentialStep) -> DifferentialOutcome {
    do {
      switch step {
      case .prepare(let schemas):
        try prepare(schemas)
        return .prepared
      case .apply(let operations): return .summary(try apply(operations))
      case .bulkInsert(let entity, let rows): return .summary(try bulkInsert(entity, rows))
      case .fetch(let query): return .rows(try fetch(query))
      case .count(let query): return .count(try count(query))
      case .aggregate(let aggregation): return .groups(try aggregate(aggregation))
      case .get(let entity, let ids): return .rows(try get(entity, ids))
      case .reopen:
        prepared = Dictionary(uniqueKeysWithValues: stored.map { ($0.name, $0) })
        return .prepared
      case .race(let schema, let batch):
        return raceCandidates(schema, batch)[0].outcome
      }
    } catch {
      return DifferentialOutcome(error)
    }
  }

  /// The outcomes a race of `prepare(schema)` with `batch` may correctly have, each with the
  /// reference state it leaves: the batch applied before the prepare; after it, checked against
  /// the new schema or against the old one and stored in the new layout; or rejected.
  func raceCandidates(_ schema: EntitySchema, _ batch: [ChangeSet.Operation])
    -> [(outcome: DifferentialOutcome, state: DifferentialReference)]
  {
    var before = self
    let batchFirst = before.runOutcome { .summary(try $0.apply(batch)) }
    let prepareAfter = before.runOutcome {
      try $0.prepare([schema]); return .prepared
    }
    var rejected = self
    let prepareOnly = rejected.runOutcome {
      try $0.prepare([schema]); return .prepared
    }
    // The prepare first, then the batch checked against the schema it was made for and stored
    // in the new layout (as a backend that re-encodes a batch for the layout current does).
    var after = self
    let prepareFirst = after.runOutcome {
      try $0.prepare([schema])
      return .prepared
    }
    let batchAfter = after.runOutcome { reference in
      guard let old = prepared[schema.name] else { return .summary(try reference.apply(batch)) }
      _ = try SchemaEvolution(from: old, to: schema)
      // Every operation checked against the schemas before the race; the entity's rows (of
      // inserts, updates and upserts alike) stored in the new layout, as a backend does with
      // ChangeSet.layouts.
      let checked = try batch.map { operation in
        try QueryValidator.validate(
          operation, schema: operation.entity == schema.name ? old : try self.schema(operation.entity))
      }
      return .summary(try reference.tables.apply(ChangeSet(checked, layouts: [schema.name: old])))
    }
    // The prepare first, then the batch checked against the new schema: it simply came second.
    var second = self
    let prepareBeforeBatch = second.runOutcome {
      try $0.prepare([schema])
      return .prepared
    }
    let batchSecond = second.runOutcome { .summary(try $0.apply(batch)) }
    return [
      (.race(prepare: prepareAfter, batch: batchFirst, rows: before.everyRow(schema.name)), before),
      (.race(prepare: prepareBeforeBatch, batch: batchSecond, rows: second.everyRow(schema.name)), second),
      (.race(prepare: prepareFirst, batch: batchAfter, rows: after.everyRow(schema.name)), after),
      (
        .race(
          prepare: prepareOnly, batch: .error(code: "any", entity: nil, id: nil, field: nil),
          rows: rejected.everyRow(schema.name)), rejected
      ),
    ]
  }

  private mutating func runOutcome(_ body: (inout DifferentialReference) throws -> DifferentialOutcome)
    -> DifferentialOutcome
  {
    do {
      return try body(&self)
    } catch {
      return DifferentialOutcome(error)
    }
  }
}
