@_spi(Backend) import Coffer
import Foundation

/// Makes one random sequence of steps from a seed: random schemas, then batches (some failing),
/// bulk inserts, queries, reopenings, schema evolutions and prepares racing batches. It follows
/// the reference as it goes, so that rows have the shape of the schema in force and updates
/// often find their id.
struct DifferentialGenerator {
  var random: SplitMix64
  let features: DifferentialFeatures
  private var shadow = DifferentialReference()
  /// The fields of each entity that some schema of this sequence indexes or makes its id: they
  /// never get values too long for an LMDB key (511 bytes, a documented limit), whichever schema
  /// is in force.
  private var everIndexed: [String: Set<String>] = [:]
  /// The fields of each entity that some row of this sequence gave a value too long for an LMDB
  /// key: no schema of the sequence indexes them, whichever rows are stored (a race may leave
  /// either outcome).
  private var everLong: [String: Set<String>] = [:]

  init(seed: UInt64, features: DifferentialFeatures) {
    random = SplitMix64(seed: seed)
    self.features = features
  }

  /// The first step prepares random entities; then `count` random steps; then a full read of
  /// each entity.
  mutating func sequence(steps count: Int) -> [DifferentialStep] {
    var steps: [DifferentialStep] = []
    func add(_ step: DifferentialStep) {
      steps.append(step)
      switch step {
      case .prepare(let schemas):
        for schema in schemas {
          everIndexed[schema.name, default: []].formUnion(
            schema.indexes.flatMap(\.fields) + [schema.idField.name])
        }
      case .race(let schema, _):
        everIndexed[schema.name, default: []].formUnion(
          schema.indexes.flatMap(\.fields) + [schema.idField.name])
      default: break
      }
      _ = shadow.run(step)
    }
    add(.prepare(DifferentialSchemas.entities(&random)))
    for _ in 0..<count { add(step()) }
    for schema in shadow.stored { add(.fetch(Query(entity: schema.name))) }
    return steps
  }

  private var schemas: [EntitySchema] { shadow.stored }

  mutating func step() -> DifferentialStep {
    let schema = random.pick(schemas)
    switch random.below(100) {
    case 0..<36: return .apply(batch(schema))
    case 36..<43 where features.has("bulk"): return bulk(schema)
    case 43..<64: return .fetch(query(schema))
    // Without the feature, the same draws as before aggregates were generated: a fetch.
    case 64..<70 where features.has("aggregate"): return .aggregate(aggregation(schema))
    case 70..<78: return .count(query(schema))
    case 78..<84: return .get(entity: schema.name, ids: (0..<random.below(4)).map { _ in id(schema) })
    case 84..<89 where features.has("reopen"): return .reopen
    case 89..<97 where features.has("evolve"):
      if random.chance(10) { return .prepare([DifferentialSchemas.entity(schema.name + "+", &random)]) }
      if schemas.count > 1 && random.chance(12) {
        // Several entities at once: if one cannot evolve, none may change.
        return .prepare(schemas.filter { _ in random.chance(70) }.map { evolved($0) })
      }
      return .prepare([evolved(schema)])
    case 97..<100 where features.has("race"):
      let evolved = evolved(schema)
      everIndexed[schema.name, default: []].formUnion(
        evolved.indexes.flatMap(\.fields) + [evolved.idField.name])
      return .race(
        schema: evolved,
        batch: (0..<(1 + random.below(4))).map { _ in .insert(entity: schema.name, row: row(schema)) })
    default: return .fetch(query(schema))
    }
  }

  /// A changed schema that indexes no field holding a value too long for an LMDB key.
  mutating func evolved(_ schema: EntitySchema) -> EntitySchema {
    let rows = shadow.tables.allRows(schema.name)
    let long = Set(
      schema.fields.indices.filter { position in
        rows.contains { row in
          switch row[position] {
          case .string(let text): text.utf8.count > 400
          case .bytes(let data): data.count > 400
          default: false
          }
        }
      }.map { schema.fields[$0].name })
    let excluded = long.union(everLong[schema.name] ?? [])
    return DifferentialSchemas.evolved(schema, &random, features: features) { !excluded.contains($0) }
  }

  mutating func batch(_ schema: EntitySchema) -> [ChangeSet.Operation] {
    (0..<(1 + random.below(5))).map { _ in
      operation(features.has("cross-entity") && random.chance(25) ? random.pick(schemas) : schema)
    }
  }

  mutating func bulk(_ schema: EntitySchema) -> DifferentialStep {
    let count = random.chance(10) ? 50 + random.below(200) : 1 + random.below(8)
    var rows = (0..<count).map { _ in row(schema, valid: true) }
    if features.has("bulk-invalid") && random.chance(30) {
      rows[random.below(rows.count)] = row(schema, valid: false)
    }
    if random.chance(50) {
      // Mostly fresh ids, so that large inserts succeed; a stored or repeated id sometimes.
      var used = Set(shadow.tables.allRows(schema.name).map { $0[schema.idPosition] })
      for position in rows.indices where !random.chance(5) {
        let fresh = freshID(schema.idField.kind, avoiding: used)
        used.insert(fresh)
        rows[position].values[schema.idPosition] = fresh
      }
    }
    return .bulkInsert(entity: schema.name, rows: rows)
  }

  mutating func freshID(_ kind: FieldKind, avoiding used: Set<Value>) -> Value {
    for _ in 0..<8 {
      let candidate: Value =
        switch kind {
        case .string: .string("r\(random.below(1_000_000))" + random.pick(["", "\u{E9}", "%", "\u{0}"]))
        case .uuid: .uuid(UUID(uuid: uuidBytes()))
        default: .int(Int64(random.below(2_000_000)) - 1_000_000)
        }
      if !used.contains(candidate) { return candidate }
    }
    return random.pick(DifferentialValues.ids(kind))
  }

  private mutating func uuidBytes() -> uuid_t {
    let a = random.next()
    let b = random.next()
    func byte(_ word: UInt64, _ index: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: word >> (index * 8)) }
    return (
      byte(a, 0), byte(a, 1), byte(a, 2), byte(a, 3), byte(a, 4), byte(a, 5), byte(a, 6), byte(a, 7),
      byte(b, 0), byte(b, 1), byte(b, 2), byte(b, 3), byte(b, 4), byte(b, 5), byte(b, 6), byte(b, 7)
    )
  }

  mutating func operation(_ schema: EntitySchema) -> ChangeSet.Operation {
    let entity = schema.name
    switch random.below(100) {
    case 0..<32: return .insert(entity: entity, row: row(schema))
    case 32..<50: return .update(entity: entity, row: row(schema))
    case 50..<70: return .upsert(entity: entity, row: row(schema))
    case 70..<84: return .delete(entity: entity, id: id(schema))
    case 84..<92:
      return .updateMatching(
        entity: entity, filter: filter(schema, depth: random.below(3)),
        changes: (0..<(1 + random.below(2))).map { _ in fieldUpdate(schema) })
    default: return .deleteMatching(entity: entity, filter: filter(schema, depth: random.below(3)))
    }
  }

  /// A change for an update by query: a field set to a value (sometimes one it cannot hold, or
  /// the id), or a number field added to (sometimes enough to overflow).
  mutating func fieldUpdate(_ schema: EntitySchema) -> FieldUpdate {
    let field = random.pick(schema.fields)
    let indexed = Set(schema.indexes.flatMap(\.fields)).union(everIndexed[schema.name] ?? [])
    if (field.kind == .int || field.kind == .double) && random.chance(50) {
      let amount: Value =
        field.kind == .int
        ? (random.chance(20) ? random.pick([.int(.max), .int(.min)]) : .int(Int64(random.below(7)) - 3))
        : random.pick(DifferentialValues.small(.double))
      return .add(field.name, amount)
    }
    if random.chance(5) { return .set(field.name, to: .null) }
    let value = value(field, key: indexed.contains(field.name))
    switch value {
    case .string(let text) where text.utf8.count > 400: everLong[schema.name, default: []].insert(field.name)
    case .bytes(let data) where data.count > 400: everLong[schema.name, default: []].insert(field.name)
    default: break
    }
    return .set(field.name, to: value)
  }

  /// An id: usually one stored, else one from the kind's small pool.
  mutating func id(_ schema: EntitySchema) -> Value {
    let stored = shadow.tables.allRows(schema.name)
    if !stored.isEmpty && random.chance(50) {
      // In id order: the table keeps its rows in a dictionary, whose order changes from process
      // to process, and a seed must give the same sequence in every run to be replayed.
      return random.pick(stored.map { $0[schema.idPosition] }.sorted { ValueOrder.compare($0, $1) < 0 })
    }
    return random.pick(DifferentialValues.ids(schema.idField.kind))
  }

  /// A row of the schema; one in thirty is invalid (null where required, NaN, a wrong kind or
  /// a wrong length) unless `valid` says otherwise.
  mutating func row(_ schema: EntitySchema, valid: Bool? = nil) -> Row {
    let indexed = Set(schema.indexes.flatMap(\.fields)).union(everIndexed[schema.name] ?? [])
    var values = schema.fields.enumerated().map { position, field in
      position == schema.idPosition ? id(schema) : value(field, key: indexed.contains(field.name))
    }
    for (position, value) in values.enumerated() {
      let length: Int =
        switch value {
        case .string(let text): text.utf8.count
        case .bytes(let data): data.count
        default: 0
        }
      if length > 400 { everLong[schema.name, default: []].insert(schema.fields[position].name) }
    }
    let invalid = valid.map { !$0 } ?? random.chance(3)
    if invalid {
      let position = random.below(values.count)
      switch random.below(4) {
      case 0: values[position] = .null
      case 1:
        values[position] =
          schema.fields[position].kind == .date ? .date(Date(timeIntervalSince1970: .nan)) : .double(.nan)
      case 2: values[position] = schema.fields[position].kind == .bool ? .int(1) : .bool(true)
      default: values.append(.null)
      }
    }
    return Row(values)
  }

  mutating func value(_ field: Field, key: Bool) -> Value {
    if field.isOptional && random.chance(22) { return .null }
    if random.chance(60) { return random.pick(DifferentialValues.small(field.kind)) }
    let pool = DifferentialValues.pool(field.kind, key: key || !features.has("huge-values"))
    return random.pick(pool)
  }

  /// An aggregate of every function, grouped or not, over a random filter. Sums and averages
  /// only of integers: a sum of doubles depends on the order rows are added in (within the
  /// stated tolerance, which the conformance checks hold backends to), so it has no one
  /// bit-for-bit answer to compare.
  mutating func aggregation(_ schema: EntitySchema) -> Aggregation {
    let ordered = schema.fields.filter(\.kind.isOrdered).map(\.name)
    let integers = schema.fields.filter { $0.kind == .int }.map(\.name)
    let function: Aggregation.Function
    switch random.below(5) {
    case 0: function = .count
    case 1: function = .countDistinct(random.pick(ordered))
    case 2: function = .min(random.pick(ordered))
    case 3: function = .max(random.pick(ordered))
    default:
      if integers.isEmpty {
        function = .count
      } else {
        function = random.chance(50) ? .sum(random.pick(integers)) : .average(random.pick(integers))
      }
    }
    let groupBy = random.chance(50) ? random.pick(ordered) : nil
    return Aggregation(
      entity: schema.name, filter: filter(schema, depth: random.below(3)), function, groupedBy: groupBy)
  }

  mutating func query(_ schema: EntitySchema) -> Query {
    let sortable = schema.fields.filter(\.kind.isOrdered)
    let sort = (0..<random.below(4)).map { _ in Sort(random.pick(sortable).name, ascending: random.chance(50))
    }
    var limit: Int? = random.chance(50) ? nil : random.below(7)
    var offset = random.chance(55) ? 0 : random.below(6)
    if random.chance(4) { offset = random.pick([100, 1 << 40]) }
    if features.has("huge-limit") && random.chance(3) {
      limit = random.pick([Int.max, Int.max - 1, Int(Int32.max)])
      if random.chance(50) { offset = random.pick([1, 2, Int.max]) }
    }
    var filter = filter(schema, depth: random.below(4))
    if features.has("deep-filter") && random.chance(2) { filter = deep(schema, depth: 30 + random.below(40)) }
    return Query(entity: schema.name, filter: filter, sort: sort, limit: limit, offset: offset)
  }

  /// A filter alternating and/or `depth` levels deep.
  mutating func deep(_ schema: EntitySchema, depth: Int) -> Filter {
    var filter = leaf(schema)
    for level in 0..<depth {
      filter = level % 2 == 0 ? .and([filter, leaf(schema)]) : .or([filter, leaf(schema)])
    }
    return filter
  }

  /// A random filter nested up to `depth` levels, using every operation.
  mutating func filter(_ schema: EntitySchema, depth: Int) -> Filter {
    if depth > 0 && random.chance(55) {
      switch random.below(3) {
      case 0: return .and((0..<random.below(4)).map { _ in filter(schema, depth: depth - 1) })
      case 1: return .or((0..<random.below(4)).map { _ in filter(schema, depth: depth - 1) })
      default: return .not(filter(schema, depth: depth - 1))
      }
    }
    return leaf(schema)
  }

  mutating func leaf(_ schema: EntitySchema) -> Filter {
    let field = random.pick(schema.fields)
    let roll = random.below(100)
    if roll < 3 { return .all }
    if roll < 18 {
      return .isIn(field.name, (0..<random.below(4)).map { _ in value(field, key: true) })
    }
    if field.kind == .string && roll < 45 {
      let pattern = random.pick([
        "", "a", "A", "%", "_", "*", "e", "\u{301}", "\u{E9}", "b", "z", "\u{0}", "a%", "_b", "\u{1F600}",
        "'",
        "k", "x", "K", "\u{212A}", "\u{C9}", "Ab",
      ])
      return .string(field: field.name, match: random.pick(StringMatch.allCases), pattern: pattern)
    }
    if field.kind.isOrdered && random.chance(8) {
      // Field against field: another field of the same kind, or the field itself.
      let other = random.pick(schema.fields.filter { $0.kind == field.kind })
      return .compareFields(
        field: field.name, op: random.pick(ComparisonOperator.allCases), other: other.name)
    }
    if random.chance(12) {
      return .compare(field: field.name, op: random.chance(50) ? .equal : .notEqual, value: .null)
    }
    let ops: [ComparisonOperator] = field.kind.isOrdered ? ComparisonOperator.allCases : [.equal, .notEqual]
    var operand = field.name == schema.idField.name ? id(schema) : value(field, key: true)
    if operand.isNull { operand = random.pick(DifferentialValues.small(field.kind)) }
    if field.kind == .double && random.chance(15) { operand = random.pick([0, 1, -1, .int(.max)]) }
    return .compare(field: field.name, op: random.pick(ops), value: operand)
  }
}
