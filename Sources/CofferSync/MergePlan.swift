@_spi(Backend) import Coffer

/// The writes that bring a replica's rows to their merged states: rows stored or deleted,
/// the records written, and what the rows must still hold when the batch applies.
struct MergePlan {
  var records: [SyncRowState] = []
  var rows: [ChangeSet.Operation] = []
  var preconditions: [ChangeSet.Precondition] = []

  static func make(_ changed: [SyncRowState], stored: [String: Row], replica: SyncReplica) async throws
    -> MergePlan
  {
    var plan = MergePlan()
    let schemas = await replica.schemas
    let order = await replica.referenceOrder()
    var stores: [(depth: Int, operation: ChangeSet.Operation)] = []
    var deletes: [(depth: Int, operation: ChangeSet.Operation)] = []
    for state in changed {
      guard let schema = schemas[state.entity] else { continue }
      plan.records.append(state)
      let row = stored[state.key]
      if let row {
        plan.preconditions.append(.unchanged(row, in: schema))
      } else {
        plan.preconditions.append(.absent(state.id, in: schema))
      }
      let depth = order[state.entity] ?? 0
      if state.isAlive {
        let values = schema.fields.map { state.fields[$0.name]?.value ?? $0.defaultValue ?? .null }
        if values != row?.values { stores.append((depth, .upsert(entity: state.entity, row: Row(values)))) }
      } else if row != nil {
        deletes.append((depth, .delete(entity: state.entity, id: state.id)))
      }
    }
    // Referenced rows are stored before the rows that refer to them, and deleted after them.
    plan.rows =
      stores.enumerated().sorted { ($0.element.depth, $0.offset) < ($1.element.depth, $1.offset) }
      .map(\.element.operation)
      + deletes.enumerated().sorted { ($0.element.depth, -$0.offset) > ($1.element.depth, -$1.offset) }
      .map(\.element.operation)
    return plan
  }
}
