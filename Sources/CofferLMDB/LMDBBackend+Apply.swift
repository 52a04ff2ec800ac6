import CLMDB
@_spi(Backend) import Coffer

extension LMDBBackend {
  /// Applies the batch in one LMDB write transaction, committed durably before returning; on
  /// any error the transaction is aborted, so nothing is applied.
  @discardableResult
  @_spi(Backend) public func apply(_ changes: ChangeSet) async throws -> ChangeSummary {
    try checkOpen()
    if changes.isEmpty { return ChangeSummary() }
    return try await environment.writeOffPool(
      { transaction in
        let check = try checkHandlesCurrent(for: changes, in: transaction)
        let feedDatabase = try feed.database(in: transaction, catalog: catalog)
        return (try apply(changes, check: check, feed: feedDatabase, in: transaction), check, feedDatabase)
      },
      committed: {
        publish($0.1)
        if let feedDatabase = $0.2 { feedCommitted(feedDatabase) }
      }
    ).0
  }

  /// Applies the batch in `transaction`, through the handles `check` made again or the
  /// prepared ones, recording what it changed in the change feed's database when there is one.
  private func apply(
    _ changes: ChangeSet, check: HandleCheck, feed feedDatabase: MDB_dbi?, in transaction: Transaction
  )
    throws -> ChangeSummary
  {
    var summary = ChangeSummary()
    var collected: ChangeCollector? = feedDatabase == nil ? nil : ChangeCollector()
    var buffer = Scratch()
    var current: (entity: String, handle: EntityHandle, reshape: RowReshaper)?
    for precondition in changes.preconditions {
      let handle = try check.handle(precondition.query.entity, of: self)
      try precondition.verify(
        try rows(of: precondition.query, handle: handle, in: transaction), store: name)
    }
    for operation in changes.operations {
      let entity = operation.entity
      let handle: EntityHandle
      let reshape: RowReshaper
      if let current, current.entity == entity {
        (handle, reshape) = (current.handle, current.reshape)
      } else {
        handle = try check.handle(entity, of: self)
        reshape = try changes.reshaper(for: handle.schema, store: name)
        current = (entity, handle, reshape)
      }
      switch operation {
      case .insert(_, let made):
        let row = reshape(made)
        try insert(row.values, handle: handle, buffer: &buffer, in: transaction)
        summary.inserted += 1
        collected?.stored(row, in: handle.schema, existed: false)
      case .insertMany(_, let rows):
        // Each row is made, encoded and written before the next is asked for. A retried
        // transaction (the map grew) asks for the rows again.
        for position in 0..<rows.count {
          let row = reshape(try rows.row(at: position))
          try insert(row.values, handle: handle, buffer: &buffer, in: transaction)
          collected?.stored(row, in: handle.schema, existed: false)
        }
        summary.inserted += rows.count
      case .update(_, let made):
        let row = reshape(made)
        guard try replace(row.values, handle: handle, mustExist: true, buffer: &buffer, in: transaction)
        else {
          continue
        }
        summary.updated += 1
        collected?.stored(row, in: handle.schema, existed: true)
      case .upsert(_, let made):
        let row = reshape(made)
        let replaced = try replace(
          row.values, handle: handle, mustExist: false, buffer: &buffer, in: transaction)
        if replaced {
          summary.updated += 1
        } else {
          summary.inserted += 1
        }
        collected?.stored(row, in: handle.schema, existed: replaced)
      case .delete(_, let id):
        if try delete(KeyEncoding.idKey(id), handle: handle, buffer: &buffer, in: transaction) {
          summary.deleted += 1
          collected?.removed(id: id, from: handle.schema)
        }
      case .deleteMatching(_, let filter):
        if collected != nil {
          var query = Query(entity: handle.schema.name, filter: filter)
          query.layout = handle.schema
          for row in try rows(of: query, handle: handle, in: transaction) {
            collected?.removed(id: row[handle.schema.idPosition], from: handle.schema)
          }
        }
        let plan = try plan(
          Query(entity: handle.schema.name, filter: filter), handle: handle, in: transaction)
        var doomed: [[UInt8]] = []
        try scan(plan, handle: handle, in: transaction) { key, _ in
          doomed.append(Array(key))
          return true
        }
        for key in doomed where try delete(key, handle: handle, buffer: &buffer, in: transaction) {
          summary.deleted += 1
        }
      case .updateMatching(_, let filter, let changes):
        // Each matching row as stored now, in id order, changed and written like an update.
        let updates = try CompiledFieldUpdates(changes, schema: handle.schema)
        var query = Query(entity: handle.schema.name, filter: filter)
        query.layout = handle.schema
        for row in try rows(of: query, handle: handle, in: transaction) {
          let changed = try updates.apply(to: row, store: name)
          if try replace(changed.values, handle: handle, mustExist: true, buffer: &buffer, in: transaction) {
            summary.updated += 1
            collected?.stored(changed, in: handle.schema, existed: true)
          }
        }
      }
    }
    if let feedDatabase, let collected {
      try feed.record(collected, in: feedDatabase, catalog: catalog, transaction: transaction)
    }
    return summary
  }

  /// Inserts a row and its index entries: `duplicateID` when its id is stored, `uniqueViolation`
  /// when a unique index holds its values for another row.
  func insert(
    _ values: [Value], handle: EntityHandle, buffer: inout Scratch, in transaction: Transaction
  )
    throws
  {
    handle.idKey(values, into: &buffer.id)
    try handle.checkIDKey(buffer.id, values, store: name)
    Self.encode(values, handle: handle, into: &buffer.row)
    guard try transaction.put(handle.rows, buffer.id, buffer.row, flags: MDB_NOOVERWRITE) else {
      let id = values[handle.schema.idPosition]
      throw CofferError.idAlreadyStored(entity: handle.schema.name, id: id, store: name)
    }
    let writer = handle.writer
    let indexed = handle.writerValues(values)
    for index in writer.indexes {
      try index.add(indexed, idKey: buffer.id, schema: writer.schema, key: &buffer.index, in: transaction)
    }
  }

  /// Replaces the row with the same id; inserts it when there is none and `mustExist` is not
  /// set. Returns whether a row was replaced.
  private func replace(
    _ values: [Value], handle: EntityHandle, mustExist: Bool, buffer: inout Scratch,
    in transaction: Transaction
  ) throws -> Bool {
    handle.idKey(values, into: &buffer.id)
    // The stored row as the schema whose indexes writes keep sees it.
    let writer = handle.writer
    let old = try buffer.id.withUnsafeBytes { key in
      try transaction.get(handle.rows, key).map { try decode($0, key: key, handle: writer, in: transaction) }
    }
    guard let old else {
      if mustExist {
        let id = values[handle.schema.idPosition]
        throw CofferError.nothingToUpdate(entity: handle.schema.name, id: id, store: name)
      }
      try insert(values, handle: handle, buffer: &buffer, in: transaction)
      return false
    }
    let indexed = handle.writerValues(values)
    for index in writer.indexes {
      try index.replace(
        old, with: indexed, idKey: buffer.id, schema: writer.schema, key: &buffer.index, in: transaction)
    }
    Self.encode(values, handle: handle, into: &buffer.row)
    try transaction.put(handle.rows, buffer.id, buffer.row)
    return true
  }

  /// Deletes the row with an id key and its index entries; returns whether it was there.
  private func delete(
    _ idKey: [UInt8], handle: EntityHandle, buffer: inout Scratch, in transaction: Transaction
  )
    throws -> Bool
  {
    let writer = handle.writer
    let old = try idKey.withUnsafeBytes { key in
      try transaction.get(handle.rows, key).map { try decode($0, key: key, handle: writer, in: transaction) }
    }
    guard let old else { return false }
    for index in writer.indexes { try index.remove(old, idKey: idKey, key: &buffer.index, in: transaction) }
    return try transaction.delete(handle.rows, idKey)
  }
}

/// Byte buffers a batch reuses for every row: the id key, the row, an index key.
struct Scratch {
  var id: [UInt8] = []
  var row: [UInt8] = []
  var index: [UInt8] = []

  init() {
    id.reserveCapacity(32)
    row.reserveCapacity(256)
    index.reserveCapacity(64)
  }
}
