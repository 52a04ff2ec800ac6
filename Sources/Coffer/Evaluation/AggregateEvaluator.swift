/// The reference meaning of an ``Aggregation``: computed from the rows ``StorageBackend/read(_:_:)``
/// hands over. A backend that is not ``AggregateComputing`` (memory, plist, LMDB) is answered with
/// this; SQL backends compute the same in the database and finish their results with the helpers here,
/// so every backend rounds, orders and fails alike.
@_spi(Backend) public enum AggregateEvaluator {
  /// Reads the rows the aggregation's filter selects through `read` and computes it.
  ///
  /// - Parameters:
  ///   - aggregation: a validated aggregation (its query's layout set).
  ///   - schema: the layout rows are read in, used when the aggregation carries none.
  ///   - read: reads a query's rows, as ``StorageBackend/read(_:_:)`` does.
  /// - Throws: ``CofferError/Code/valueOutOfRange`` for a sum outside `Int64` or a double sum
  ///   or average that is not a finite number from finite values or mixes both infinities;
  ///   ``CofferError/Code/invalidQuery`` for an unknown field; what `read` throws.
  public static func evaluate(
    _ aggregation: Aggregation, schema: EntitySchema,
    read: (Query, (any StoredFields) throws -> Void) async throws -> Void
  ) async throws -> [AggregateGroup<Value, Value>] {
    var query = aggregation.query
    query.layout = aggregation.query.layout ?? schema
    query.sort = []
    query.limit = nil
    query.offset = 0
    var groups = try Groups(aggregation, schema: schema)
    try await read(query) { try groups.add($0) }
    return try groups.results()
  }

  /// Computes the aggregation over the rows `backend` reads, in the layout the aggregation
  /// carries or, when it carries none, the schema the entity is stored in: what ``Store`` uses
  /// for a backend that is not ``AggregateComputing``, and what one falls back to.
  ///
  /// - Throws: as ``evaluate(_:schema:read:)``; ``CofferError/Code/unknownEntity`` for an
  ///   entity that was never prepared.
  public static func evaluate(_ aggregation: Aggregation, on backend: any StorageBackend) async throws
    -> [AggregateGroup<Value, Value>]
  {
    let schema: EntitySchema
    if let layout = aggregation.query.layout {
      schema = layout
    } else if let stored = try await backend.storedSchemas().first(where: {
      $0.name == aggregation.query.entity
    }) {
      schema = stored
    } else {
      throw CofferError(
        .unknownEntity,
        "Entity '\(aggregation.query.entity)' was never prepared in this store. Prepare it first "
          + "(Store does this for you).", store: backend.name, entity: aggregation.query.entity)
    }
    return try await evaluate(aggregation, schema: schema) { try await backend.read($0, $1) }
  }

  /// Computes an aggregation over rows already selected by its filter (in its layout, or
  /// `schema` when it carries none): what a reference that holds its rows in memory calls.
  public static func evaluate(_ aggregation: Aggregation, schema: EntitySchema, rows: [Row]) throws
    -> [AggregateGroup<Value, Value>]
  {
    var groups = try Groups(aggregation, schema: schema)
    for row in rows { try groups.add(RowFields(row)) }
    return try groups.results()
  }

  /// The kind of the field an aggregation reads (`int` for a count).
  public static func kind(of aggregation: Aggregation, in schema: EntitySchema) -> FieldKind {
    aggregation.function.field.flatMap { schema.field(named: $0)?.kind } ?? .int
  }

  /// A sum or average of doubles from what a database computed over one group's non-null
  /// values: their `count`, their `sum` (`nil` when the database gave none, as SQLite does for
  /// NaN), `smallest` and `largest`. Null for no values; an infinity when the values hold one
  /// (never both signs); otherwise the finite sum (divided by `count` for an average).
  ///
  /// - Throws: ``CofferError/Code/valueOutOfRange`` for `+infinity` with `-infinity`, or finite
  ///   values whose sum is not finite.
  public static func finishDoubles(
    count: Int, sum: Double?, smallest: Double?, largest: Double?, _ aggregation: Aggregation
  ) throws -> Value {
    if count == 0 { return .null }
    let positive = largest == .infinity
    let negative = smallest == -.infinity
    if positive, negative { throw notANumber(aggregation) }
    if positive { return .double(.infinity) }
    if negative { return .double(-.infinity) }
    guard let sum, sum.isFinite else { throw outOfRange(aggregation) }
    if case .average = aggregation.function { return normalized(.double(sum / Double(count))) }
    return normalized(.double(sum))
  }

  /// A value as an aggregate returns it: a double zero as `+0.0` (a database may keep either
  /// sign of zero, and `-0.0 == 0.0` makes them one group and one extreme).
  public static func normalized(_ value: Value) -> Value {
    if case .double(let number) = value, number == 0 { return .double(0) }
    return value
  }

  /// The error for a sum of integers outside `Int64`, or of doubles beyond `Double`'s range.
  public static func outOfRange(_ aggregation: Aggregation) -> CofferError {
    let entity = aggregation.query.entity
    let field = aggregation.function.field ?? ""
    return CofferError(
      .valueOutOfRange,
      "The \(aggregation.function.name) of \(entity).\(field) is out of range: the values add up to more than "
        + "the field's number type holds (Int64 for integers, Double for doubles). Aggregate fewer rows "
        + "(filter or group them), or fetch them and add them up in a wider type.",
      entity: entity, field: field)
  }

  /// The error for a sum or average of doubles holding both `+infinity` and `-infinity`.
  public static func notANumber(_ aggregation: Aggregation) -> CofferError {
    let entity = aggregation.query.entity
    let field = aggregation.function.field ?? ""
    return CofferError(
      .valueOutOfRange,
      "The \(aggregation.function.name) of \(entity).\(field) adds +infinity and -infinity, which is not a "
        + "number, and Coffer never returns NaN. Filter out the infinite values of one sign.",
      entity: entity, field: field)
  }

  private static func position(of field: String, in schema: EntitySchema) throws -> Int {
    guard let position = schema.position(of: field) else { throw QueryValidator.unknownField(field, schema) }
    return position
  }

  /// The groups seen so far, by key.
  private struct Groups {
    let aggregation: Aggregation
    let kind: FieldKind
    let valuePosition: Int?
    let keyPosition: Int?
    var groups: [Value: Accumulator] = [:]

    init(_ aggregation: Aggregation, schema: EntitySchema) throws {
      let layout = aggregation.query.layout ?? schema
      self.aggregation = aggregation
      kind = AggregateEvaluator.kind(of: aggregation, in: layout)
      valuePosition = try aggregation.function.field.map { try position(of: $0, in: layout) }
      keyPosition = try aggregation.groupBy.map { try position(of: $0, in: layout) }
      if keyPosition == nil { groups[.null] = Accumulator() }
    }

    mutating func add(_ fields: some StoredFields) throws {
      let key = try keyPosition.map { try fields.value(at: $0) } ?? .null
      let value = try valuePosition.map { try fields.value(at: $0) } ?? .null
      groups[key, default: Accumulator()].add(value, aggregation.function)
    }

    func results() throws -> [AggregateGroup<Value, Value>] {
      try groups.keys.sorted { ValueOrder.compare($0, $1) < 0 }.map { key in
        AggregateGroup(
          key: normalized(key), value: try groups[key, default: Accumulator()].result(aggregation, kind: kind)
        )
      }
    }
  }

  /// What one group has seen so far.
  private struct Accumulator {
    /// Rows, for a count; non-null values otherwise.
    var count = 0
    var distinct: Set<Value> = []
    /// An integer sum as `carry × 2⁶⁴ + intSum`: exact whatever the order of the values.
    var intSum: Int64 = 0
    var carry = 0
    var doubleSum = 0.0
    var smallest = Double.infinity
    var largest = -Double.infinity
    var extreme: Value = .null

    mutating func add(_ value: Value, _ function: Aggregation.Function) {
      if case .count = function {
        count += 1
        return
      }
      if value.isNull { return }
      count += 1
      switch function {
      case .count: break
      case .countDistinct: distinct.insert(value)
      case .min: if extreme.isNull || ValueOrder.compare(value, extreme) < 0 { extreme = value }
      case .max: if extreme.isNull || ValueOrder.compare(value, extreme) > 0 { extreme = value }
      case .sum, .average:
        switch value {
        case .int(let number):
          let (sum, overflow) = intSum.addingReportingOverflow(number)
          if overflow { carry += number < 0 ? -1 : 1 }
          intSum = sum
        case .double(let number):
          doubleSum += number
          smallest = Swift.min(smallest, number)
          largest = Swift.max(largest, number)
        default: break
        }
      }
    }

    func result(_ aggregation: Aggregation, kind: FieldKind) throws -> Value {
      switch aggregation.function {
      case .count: return .int(Int64(count))
      case .countDistinct: return .int(Int64(distinct.count))
      case .min, .max: return normalized(extreme)
      case .sum, .average:
        if count == 0 { return .null }
        if kind == .double {
          return try finishDoubles(
            count: count, sum: doubleSum, smallest: smallest, largest: largest, aggregation)
        }
        if case .average = aggregation.function {
          // The sum as SQL backends divide it: exactly Double(intSum) when it fits in Int64.
          let sum =
            carry == 0 ? Double(intSum) : Double(carry) * 18_446_744_073_709_551_616.0 + Double(intSum)
          return .double(sum / Double(count))
        }
        guard carry == 0 else { throw outOfRange(aggregation) }
        return .int(intSum)
      }
    }
  }
}
