import Coffer

/// Makes random batches and queries over ``DifferentialModel``'s entities from a seed.
struct DifferentialGenerator {
  var random: SplitMix64
  let schemas: [EntitySchema]
  /// Whether one batch may change both entities (only for backends atomic across entities).
  let crossEntity: Bool

  init(seed: UInt64, schemas: [EntitySchema], crossEntity: Bool) {
    random = SplitMix64(seed: seed)
    self.schemas = schemas
    self.crossEntity = crossEntity
  }

  /// `batches` batches with `queries` queries spread between them, then a full read of each entity.
  mutating func steps(batches: Int, queries: Int) -> [DifferentialStep] {
    var steps: [DifferentialStep] = []
    var queriesLeft = queries
    for made in 0..<batches {
      steps.append(.apply(batch()))
      let due = (queries * (made + 1)) / batches - (queries - queriesLeft)
      for _ in 0..<max(0, due) {
        let query = self.query()
        steps.append(random.chance(25) ? .count(query) : .fetch(query))
        queriesLeft -= 1
      }
    }
    for schema in schemas { steps.append(.fetch(Query(entity: schema.name))) }
    return steps
  }

  mutating func batch() -> [ChangeSet.Operation] {
    let only = random.pick(schemas)
    return (0..<(1 + random.below(4))).map { _ in operation(crossEntity ? random.pick(schemas) : only) }
  }

  mutating func operation(_ schema: EntitySchema) -> ChangeSet.Operation {
    let entity = schema.name
    switch random.below(100) {
    case 0..<30: return .insert(entity: entity, row: row(schema))
    case 30..<50: return .update(entity: entity, row: row(schema))
    case 50..<70: return .upsert(entity: entity, row: row(schema))
    case 70..<90:
      return .delete(entity: entity, id: random.pick(DifferentialModel.pool(entity, schema.idField.name)))
    default: return .deleteMatching(entity: entity, filter: filter(schema, depth: random.below(2)))
    }
  }

  mutating func row(_ schema: EntitySchema) -> Row {
    Row(schema.fields.map { field in value(schema.name, field, allowNull: field.isOptional) })
  }

  mutating func value(_ entity: String, _ field: Field, allowNull: Bool) -> Value {
    if allowNull && random.chance(20) { return .null }
    return random.pick(DifferentialModel.pool(entity, field.name))
  }

  mutating func query() -> Query {
    let schema = random.pick(schemas)
    let sortable = schema.fields.filter(\.kind.isOrdered)
    let sort = (0..<random.below(4)).map { _ in Sort(random.pick(sortable).name, ascending: random.chance(50))
    }
    return Query(
      entity: schema.name, filter: filter(schema, depth: random.below(4)), sort: sort,
      limit: random.chance(50) ? nil : random.below(7), offset: random.chance(50) ? 0 : random.below(6))
  }

  /// A random filter nested up to `depth` levels, using every operation.
  mutating func filter(_ schema: EntitySchema, depth: Int) -> Filter {
    if depth > 0 && random.chance(60) {
      switch random.below(3) {
      case 0: return .and((0..<random.below(4)).map { _ in filter(schema, depth: depth - 1) })
      case 1: return .or((0..<random.below(4)).map { _ in filter(schema, depth: depth - 1) })
      default: return .not(filter(schema, depth: depth - 1))
      }
    }
    let field = random.pick(schema.fields)
    let roll = random.below(100)
    if roll < 3 { return .all }
    if roll < 20 {
      let values = (0..<random.below(4)).map { _ in value(schema.name, field, allowNull: true) }
      return .isIn(field.name, values)
    }
    if field.kind == .string && roll < 45 {
      let pattern = random.pick(["", "a", "A", "%", "_", "e", "\u{301}", "b", "Z", "z", "\u{E9}"])
      return .string(field: field.name, match: random.pick(StringMatch.allCases), pattern: pattern)
    }
    if random.chance(12) {
      return .compare(field: field.name, op: random.chance(50) ? .equal : .notEqual, value: .null)
    }
    return .compare(
      field: field.name, op: random.pick(ComparisonOperator.allCases),
      value: value(schema.name, field, allowNull: false))
  }
}
