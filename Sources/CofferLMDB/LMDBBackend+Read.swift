@_spi(Backend) import Coffer

extension LMDBBackend {
  /// Hands over the rows a query selects straight from the memory map, in one read transaction.
  /// A row whose values the walk cannot vouch for (a filter the key range does not pin) or that
  /// was written under an older layout is decoded into a ``Coffer/Row`` first; a query the
  /// walk does not read in order is fetched whole and sorted first.
  ///
  /// A lookup by id (see ``Query/lookedUpIDs(in:)``) is one B-tree lookup per id.
  @_spi(Backend) public func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    try read(query, in: nil, visit)
  }

  /// ``read(_:_:)`` in `pinned` (a snapshot's transaction), or in a read transaction of its own
  /// when it is `nil`.
  func read(_ query: Query, in pinned: Transaction?, _ visit: (any StoredFields) throws -> Void) throws {
    let handle = try handle(query.entity)
    if let id = query.lookedUpID(in: handle.schema) {
      return try read(handle, ids: CollectionOfOne(id), as: query.layout, in: pinned, visit)
    }
    if let ids = query.lookedUpIDs(in: handle.schema) {
      return try read(handle, ids: ids, as: query.layout, in: pinned, visit)
    }
    // Rows in the layout the reader decodes with, should the entity have been prepared with
    // another schema since it validated the query.
    let view = try RowReshaper(reading: handle.schema, as: query.layout, store: name).makeView()
    if let limit = query.limit, limit <= 0 { return }
    try environment.read(in: pinned) { transaction in
      let plan = try plan(query, handle: handle, in: transaction)
      guard plan.isOrdered else {
        let rows = try sortedRows(query, plan: plan, handle: handle, in: transaction)
        guard let view else { return try RowFields.handOver(rows, to: visit) }
        for row in rows { try visit(view.showing(RowFields(row))) }
        return
      }
      guard let view else {
        return try readInOrder(query, plan: plan, handle: handle, in: transaction, visit)
      }
      try readInOrder(query, plan: plan, handle: handle, in: transaction) { try visit(view.showing($0)) }
    }
  }

  /// Walks a plan that reads in the query's order, skipping its offset and stopping at its
  /// limit, and hands over each row that matches.
  func readInOrder(
    _ query: Query, plan: QueryPlan, handle: EntityHandle, in pinned: Transaction?,
    _ visit: (any StoredFields) throws -> Void
  ) throws {
    if let limit = query.limit, limit <= 0 { return }
    let offset = max(0, query.offset)
    let wanted = query.limit ?? Int.max
    try environment.read(in: pinned) { transaction in
      try LMDBFields.with(handle, backend: self) { fields in
        var decoded: RowFields?
        var skipped = 0
        var visited = 0
        var probe = FilterProbe(plan: plan, handle: handle)
        try walk(plan, handle: handle, in: transaction) { key, bytes in
          if try probe.rejects(bytes, key: key, backend: self) { return true }
          guard
            let row = try self.fields(
              bytes, key: key, plan: plan, kept: probe.tested, into: fields, or: &decoded, in: transaction)
          else {
            return true
          }
          if skipped < offset {
            skipped += 1
            return true
          }
          try visit(row)
          visited += 1
          return visited < wanted
        }
      }
    }
  }

  /// Hands over the rows with these ids straight from the memory map, each one B-tree lookup,
  /// in one read transaction, in the layout of `layout`.
  private func read(
    _ handle: EntityHandle, ids: some Collection<Value>, as layout: EntitySchema?, in pinned: Transaction?,
    _ visit: (any StoredFields) throws -> Void
  ) throws {
    if ids.isEmpty { return }
    if let view = try RowReshaper(reading: handle.schema, as: layout, store: name).makeView() {
      return try read(handle, ids: ids, as: nil, in: pinned) { try visit(view.showing($0)) }
    }
    try environment.read(in: pinned) { transaction in
      try LMDBFields.with(handle, backend: self) { fields in
        var decoded: RowFields?
        for id in ids {
          try KeyEncoding.withIDKey(id) { key in
            guard let bytes = try transaction.get(handle.rows, key),
              let row = try self.fields(
                bytes, key: key, plan: nil, kept: false, into: fields, or: &decoded, in: transaction)
            else { return }
            try visit(row)
          }
        }
      }
    }
  }

  /// The row at `bytes` as fields to hand over, or `nil` when the plan's filter rejects it
  /// (no plan: a lookup by id, which takes every row): `fields` loaded in place when the walk
  /// pins the filter or a ``FilterProbe`` kept the row (`kept`) and the row has the current
  /// layout, otherwise `decoded` (made the first time it is needed) carrying the row decoded and
  /// evolved.
  private func fields(
    _ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, plan: QueryPlan?, kept: Bool,
    into fields: LMDBFields, or decoded: inout RowFields?, in transaction: Transaction
  ) throws -> (any StoredFields)? {
    let pinned = kept || (plan?.walkMatchesFilter ?? true)
    if pinned {
      do {
        try fields.load(bytes, key: key)
        return fields
      } catch .otherLayout {
        // Decoded and evolved below.
      } catch {
        throw damage(error, key: key, schema: fields.schema)
      }
    }
    let row = Row(try decode(bytes, key: key, handle: fields.handle, in: transaction))
    guard pinned || plan?.filter.matches(row) != false else { return nil }
    guard let reused = decoded else {
      let made = RowFields(row)
      decoded = made
      return made
    }
    reused.current = row
    return reused
  }
}
