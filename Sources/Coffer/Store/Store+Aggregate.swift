/// Aggregates in the row API, by stored field name: for entities known only at run time.
extension Store {
  /// Computes an aggregate over the rows an ``Aggregation``'s filter selects, after checking it
  /// against the prepared schema: one group (key ``Value/null``) without grouping, one per key in
  /// ascending order (nulls first) with it.
  ///
  /// ```swift
  /// let total = try await store.aggregateRows(Aggregation(entity: "Order", .sum("cents")))[0].value
  /// ```
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for an unknown field, a sum or average of a
  ///   field that is not a number, or an extreme, distinct count or grouping on a document;
  ///   ``CofferError/Code/valueOutOfRange`` for a sum outside `Int64`, or a sum or average of
  ///   doubles that is not a finite number from finite values (see ``Aggregation``).
  public func aggregateRows(_ aggregation: Aggregation) async throws -> [AggregateGroup<Value, Value>] {
    let schema = try preparedSchema(aggregation.query.entity)
    let checked = try rethrowing { try QueryValidator.validate(aggregation, schema: schema) }
    return try await readInTurn(.aggregate, schema.name) { try await backend.computeAggregate(checked) }
  }
}

extension StoreQuery {
  /// Computes an aggregate over the rows this query's filter selects, per value of `groupBy`
  /// when given: on the backend, or with the reference evaluator over a snapshot's or a
  /// transaction's reads (which a transaction remembers, as for any read).
  func aggregate(_ function: Aggregation.Function, groupedBy groupBy: String? = nil) async throws
    -> [AggregateGroup<Value, Value>]
  {
    let codec = try await store.codec(for: T.self)
    let filter = try validated(for: codec).filter
    let schema = codec.schema
    let checked = try store.rethrowing {
      try QueryValidator.validate(
        Aggregation(entity: schema.name, filter: filter, function, groupedBy: groupBy), schema: schema)
    }
    return try await store.readInTurn(.aggregate, schema.name) {
      switch source {
      case nil:
        return try await store.backend.computeAggregate(checked)
      case .snapshot(let reader):
        return try await AggregateEvaluator.evaluate(checked, schema: schema) {
          try await reader.read($0, $1)
        }
      case .transaction(let transaction):
        return try await AggregateEvaluator.evaluate(checked, schema: schema) {
          try await transaction.read($0, $1)
        }
      }
    }
  }

  /// The one value of an aggregate without groups.
  func aggregateValue(_ function: Aggregation.Function) async throws -> Value {
    try await aggregate(function).first?.value ?? .null
  }

  /// A stored aggregate value as a Swift value of the property's type, `nil` for null.
  ///
  /// - Throws: ``CofferError/Code/valueOutOfRange`` when it does not fit the type (a sum of
  ///   `Int32` values beyond `Int32.max`).
  func decoded<V: StoredScalar>(_ value: Value, _ function: Aggregation.Function, as type: V.Type) throws
    -> V?
  {
    if value.isNull { return nil }
    if let decoded = V(storedScalar: value) { return decoded }
    let field = function.field ?? ""
    throw CofferError(
      .valueOutOfRange,
      "The \(function.name) of \(T.entityName).\(field) does not fit in \(V.self). Read it into a wider "
        + "property type.", store: store.backend.name, entity: T.entityName, field: field)
  }
}
