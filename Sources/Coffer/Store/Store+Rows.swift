import Logging

/// The untyped row API: for entities known only at run time, tools, and backends' tests.
/// Every query and change is validated against the prepared schema first.
extension Store {
  /// Applies a batch of row changes atomically, after checking every row, id and filter against
  /// the prepared schemas.
  ///
  /// Rows are checked against the schema ``ChangeSet/layouts`` names for their entity or, when
  /// it names none, the schema the entity is prepared with now; the backend stores them in
  /// the shape the entity has when the batch is applied (see ``RowReshaper``).
  ///
  /// - Throws: ``CofferError/Code/unknownEntity``, ``CofferError/Code/invalidValue``,
  ///   ``CofferError/Code/invalidQuery``, or the backend's error (nothing applied).
  @discardableResult
  @_spi(Backend) public func apply(_ changes: ChangeSet) async throws -> ChangeSummary {
    try await apply(changes, preconditionsChecked: false)
  }

  /// ``apply(_:)``, trusting the preconditions when a transaction made them of checked queries
  /// and stored rows.
  ///
  /// Unless `enforcingReferences` is false (a tool copying a whole store, entity by entity),
  /// the batch is expanded to keep references whole (see ``ReferenceExpansion``).
  @discardableResult
  package func apply(_ changes: ChangeSet, preconditionsChecked: Bool, enforcingReferences: Bool = true)
    async throws
    -> ChangeSummary
  {
    if changes.isEmpty { return ChangeSummary() }
    var checked: [ChangeSet.Operation] = []
    checked.reserveCapacity(changes.operations.count)
    var schemas: [String: EntitySchema] = [:]
    for operation in changes.operations {
      let schema: EntitySchema
      if let known = schemas[operation.entity] {
        schema = known
      } else {
        schema = try changes.layouts[operation.entity] ?? preparedSchema(operation.entity)
        schemas[operation.entity] = schema
      }
      do {
        checked.append(try QueryValidator.validate(operation, schema: schema))
      } catch let error as CofferError {
        throw error.inStore(backendName)
      }
    }
    var preconditions: [ChangeSet.Precondition] = []
    if !changes.preconditions.isEmpty {
      guard backend.capabilities.contains(.preconditions) else {
        throw CofferError(
          .unsupported,
          "This backend cannot check a batch's preconditions, so transactions and modify cannot run on it "
            + "without risking lost updates. Use a backend that declares the preconditions capability.",
          store: backendName)
      }
      preconditions.reserveCapacity(changes.preconditions.count)
      for precondition in changes.preconditions {
        let entity = precondition.query.entity
        let schema = try changes.layouts[entity] ?? schemas[entity] ?? preparedSchema(entity)
        schemas[entity] = schemas[entity] ?? schema
        preconditions.append(
          preconditionsChecked
            ? precondition : try rethrowing { try QueryValidator.validate(precondition, schema: schema) })
      }
    }
    if enforcingReferences {
      // A delete reads the catalog again (at most once a second): another process may have
      // prepared an entity that refers to the rows it deletes.
      let deletes = checked.contains {
        switch $0 {
        case .delete, .deleteMatching: true
        default: false
        }
      }
      if deletes { forgetReferences(readBefore: .seconds(1)) }
      let map = try await referenceMap()
      if map.involves(checked) {
        return try await applyKeepingReferences(
          checked, layouts: schemas, preconditions: preconditions, map: map)
      }
    }
    let summary = try await logged(operations: checked.count, entity: StoreTelemetry.entity(of: checked)) {
      try await rethrowing {
        try await backendApply(ChangeSet(checked, layouts: schemas, preconditions: preconditions))
      }
    }
    notifyObservers(of: checked)
    return summary
  }

  /// How many times a batch whose references changed under it is expanded again.
  static let referenceRetries = 8

  /// Applies checked operations expanded to keep references whole. When only the expansion's
  /// own preconditions failed (another writer changed the rows it read), it reads and expands
  /// again, a bounded number of times.
  private func applyKeepingReferences(
    _ checked: [ChangeSet.Operation], layouts: [String: EntitySchema],
    preconditions: [ChangeSet.Precondition],
    map: ReferenceMap
  ) async throws -> ChangeSummary {
    guard backend.capabilities.contains(.preconditions) else {
      throw CofferError(
        .unsupported,
        "This backend cannot check a batch's preconditions, so it cannot keep references between entities whole. "
          + "Use a backend that declares the preconditions capability, or declare the references with rule none.",
        store: backendName)
    }
    var attempt = 0
    while true {
      var expansion = ReferenceExpansion(map: map, backend: backend, store: backendName, layouts: layouts)
      try await rethrowing { try await expansion.expand(checked) }
      let operations = expansion.operations
      let changes = ChangeSet(
        operations, layouts: expansion.layouts, preconditions: preconditions + expansion.preconditions)
      do {
        var summary = try await logged(
          operations: operations.count, entity: StoreTelemetry.entity(of: operations)
        ) {
          try await rethrowing { try await backendApply(changes) }
        }
        notifyObservers(of: operations)
        // What the caller's operations did: rows the rules deleted or updated are not counted.
        summary.deleted = max(0, summary.deleted - expansion.ruleSummary.deleted)
        summary.updated = max(0, summary.updated - expansion.ruleSummary.updated)
        return summary
      } catch let error as CofferError
        where error.code == .conflict && preconditions.isEmpty && attempt < Self.referenceRetries
      {
        attempt += 1
        telemetry?.countRetry(entity: StoreTelemetry.entity(of: checked))
      }
    }
  }

  /// The rows a query selects, after checking it against the prepared schema.
  @_spi(Backend) public func fetchRows(_ query: Query) async throws -> [Row] {
    let schema = try preparedSchema(query.entity)
    let checked = try rethrowing { try QueryValidator.validate(query, schema: schema) }
    var rows: [Row] = []
    try await readInTurn(.fetch, checked.entity) {
      try await readSearching(checked) { rows.append(try Row($0)) }
    }
    return rows
  }

  /// The number of rows a query selects, after checking it against the prepared schema.
  @_spi(Backend) public func countRows(_ query: Query) async throws -> Int {
    let schema = try preparedSchema(query.entity)
    let checked = try rethrowing { try QueryValidator.validate(query, schema: schema) }
    return try await countChecked(checked)
  }

  /// Counts a checked query on the backend, which counts every row the filter selects, then
  /// applies the query's offset and limit: the one place that arithmetic lives.
  func countChecked(_ checked: Query) async throws -> Int {
    var whole = checked
    whole.sort = []
    whole.offset = 0
    whole.limit = nil
    let total = try await readInTurn(.count, whole.entity) {
      TextSearch.searches(whole) ? try await countSearching(whole) : try await backend.count(whole)
    }
    return checked.slice(ofCount: total)
  }

  /// The rows of an entity with the given ids, in order, skipping missing ones.
  @_spi(Backend) public func getRows(entity: String, ids: [Value]) async throws -> [Row] {
    let schema = try preparedSchema(entity)
    let checked = try rethrowing { try ids.map { try QueryValidator.validate(id: $0, schema: schema) } }
    return try await readInTurn(.get, entity) { try await backend.get(entity: schema, ids: checked) }
  }

  /// Applies a batch through `body`, logging it at `trace` and a failure at `debug` (its
  /// code and entity, never a value), measured as one `apply` on `entity` (`nil`: several).
  @usableFromInline
  func logged(operations: Int, entity: String?, _ body: () async throws -> ChangeSummary) async throws
    -> ChangeSummary
  {
    do {
      let summary =
        if let telemetry {
          try await telemetry.observeBatch(entity: entity, operations: operations, body)
        } else {
          try await body()
        }
      logApplied(operations: operations, summary)
      return summary
    } catch let error as CofferError {
      logRefused(error)
      throw error
    }
  }

  /// Logs an applied batch at `trace`.
  @usableFromInline
  func logApplied(operations: Int, _ summary: ChangeSummary) {
    logger.trace(
      "Applied a batch",
      metadata: [
        "coffer.operations": .stringConvertible(operations),
        "coffer.inserted": .stringConvertible(summary.inserted),
        "coffer.updated": .stringConvertible(summary.updated),
        "coffer.deleted": .stringConvertible(summary.deleted),
      ])
  }

  /// Logs a batch that was not applied at `debug`: its code and entity, never a value.
  @usableFromInline
  func logRefused(_ error: CofferError) {
    logger.debug(
      "A batch was not applied",
      metadata: ["coffer.code": .string(error.code.name), "coffer.entity": .string(error.entity ?? "")])
  }

  @inlinable
  package func rethrowing<R>(_ body: () throws -> R) throws -> R {
    do {
      return try body()
    } catch let error as CofferError {
      throw error.inStore(backendName)
    }
  }
}
