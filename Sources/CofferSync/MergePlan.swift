@_spi(Backend) import Coffer
import Foundation

/// A row a merge decides on: its merged state, its schema, the row as stored now and the conflict
/// recorded for it now.
struct MergeCandidate {
  var state: SyncRowState
  var schema: EntitySchema
  var row: Row?
  var conflict: SyncConflict?

  /// The row's merged values in the schema's field order.
  var values: [Value] { schema.fields.map { state.fields[$0.name]?.value ?? $0.defaultValue ?? .null } }

  /// The values of a unique index's fields, `nil` when one is null (such a row is exempt).
  func claim(_ index: Index) -> [Value]? {
    var result: [Value] = []
    for field in index.fields {
      guard let value = state.fields[field]?.value, !value.isNull else { return nil }
      result.append(value)
    }
    return result
  }

  /// When the row set its values of a unique index: the latest clock among the index's fields.
  func claimed(_ index: Index) -> SyncClock? { index.fields.compactMap { state.fields[$0]?.clock }.max() }
}

/// The writes that bring a replica's rows to what their merged states give: rows stored or
/// deleted, conflicts recorded or cleared, and what the rows read must still hold when the batch
/// applies.
///
/// What the states give depends on the states alone, never on the order they came in:
/// - a row is stored when it is alive, no other alive row set the same values of a unique index
///   before it (ties: the smaller key), and every row it refers to by a cascade or deny
///   reference is stored;
/// - a field whose nullify reference names a row that is not stored is stored as null.
struct MergePlan {
  var rows: [ChangeSet.Operation] = []
  var conflicts: [ChangeSet.Operation] = []
  var preconditions: [ChangeSet.Precondition] = []

  /// The key of the row a reference names.
  static func target(_ reference: EntityReference, of candidate: MergeCandidate) -> String? {
    guard reference.isEnforced, let value = candidate.state.fields[reference.field]?.value, !value.isNull
    else { return nil }
    return SyncRowState.key(entity: reference.entity, id: value)
  }

  /// The key of a unique claim: entity, index and values.
  static func claimKey(_ entity: String, _ index: Index, _ values: [Value]) -> String {
    var writer = SyncEncoding.Writer()
    for value in values { writer.value(value) }
    return ([entity] + index.fields + [Data(writer.bytes).base64EncodedString()]).joined(separator: "\u{1F}")
  }

  /// The conflict of every candidate as its state gives it (`nil`: stored as merged), rows
  /// outside the candidates being stored as `present` says (a row not named there is stored).
  static func outcomes(_ candidates: [String: MergeCandidate], present: [String: Bool]) -> [String:
    SyncConflict?]
  {
    var reasons: [String: [SyncConflict.Reason]] = [:]
    var claims: [String: (fields: [String], holders: [(clock: SyncClock?, key: String)])] = [:]
    for key in candidates.keys.sorted() {
      guard let candidate = candidates[key], candidate.state.isAlive else { continue }
      for index in candidate.schema.uniqueIndexes {
        guard let values = candidate.claim(index) else { continue }
        let claim = claimKey(candidate.schema.name, index, values)
        claims[claim, default: (index.fields, [])].holders.append((candidate.claimed(index), key))
      }
    }
    for (fields, holders) in claims.values where holders.count > 1 {
      let order = holders.sorted { first, second in
        switch (first.clock, second.clock) {
        case (let a?, let b?) where a != b: a < b
        case (nil, _?): true
        case (_?, nil): false
        default: first.key < second.key
        }
      }
      for loser in order.dropFirst() { reasons[loser.key, default: []].append(.uniqueClash(fields: fields)) }
    }
    var stored = Set(candidates.keys.filter { candidates[$0]?.state.isAlive == true && reasons[$0] == nil })
    func isStored(_ key: String) -> Bool {
      candidates[key] != nil ? stored.contains(key) : (present[key] ?? true)
    }
    var changed = true
    while changed {
      changed = false
      for key in stored.sorted() {
        guard let candidate = candidates[key] else { continue }
        let broken = candidate.schema.references.contains { reference in
          reference.onDelete != .nullify && target(reference, of: candidate).map { !isStored($0) } == true
        }
        if broken {
          stored.remove(key)
          changed = true
        }
      }
    }
    var result: [String: SyncConflict?] = [:]
    for (key, candidate) in candidates {
      guard candidate.state.isAlive else {
        result[key] = .some(nil)
        continue
      }
      var why = reasons[key] ?? []
      for reference in candidate.schema.references {
        guard let target = target(reference, of: candidate), !isStored(target) else { continue }
        why.append(.missingReference(field: reference.field, entity: reference.entity))
      }
      if why.isEmpty {
        result[key] = .some(nil)
      } else {
        result[key] = SyncConflict(
          entity: candidate.state.entity, id: candidate.state.id, reasons: why,
          isHeldBack: !stored.contains(key))
      }
    }
    return result
  }

  /// The stored row with the values of each unique index it changes set to null, so that
  /// another row of the batch can take them (two rows may swap values); `nil` when it changes
  /// none, or one whose fields cannot be null.
  static func released(_ row: Row, for values: [Value], schema: EntitySchema) -> Row? {
    var release = row.values
    for index in schema.uniqueIndexes {
      let positions = index.fields.compactMap { schema.position(of: $0) }
      guard positions.contains(where: { row[$0] != values[$0] }),
        !positions.contains(where: { row[$0].isNull }),
        positions.allSatisfy({ schema.fields[$0].isOptional })
      else { continue }
      for position in positions { release[position] = .null }
    }
    return release == row.values ? nil : Row(release)
  }

  /// Whether a stored row holds the values of a unique index (none of them null).
  static func claims(_ row: Row, schema: EntitySchema) -> Bool {
    schema.uniqueIndexes.contains { index in
      index.fields.allSatisfy { field in schema.position(of: field).map { !row[$0].isNull } ?? false }
    }
  }

  /// The plan for these candidates, with the conflicts `outcomes` gave them; `order` gives each
  /// entity's depth in the reference graph.
  static func make(
    _ candidates: [String: MergeCandidate], outcomes: [String: SyncConflict?], order: [String: Int]
  ) -> MergePlan {
    var plan = MergePlan()
    var stores: [(depth: Int, isNew: Int, key: String, operation: ChangeSet.Operation)] = []
    var deletes: [(depth: Int, key: String, operation: ChangeSet.Operation)] = []
    var holds: [(depth: Int, key: String, operation: ChangeSet.Operation)] = []
    var releases: [ChangeSet.Operation] = []
    for (key, candidate) in candidates {
      let schema = candidate.schema
      let state = candidate.state
      if let row = candidate.row {
        plan.preconditions.append(.unchanged(row, in: schema))
      } else {
        plan.preconditions.append(.absent(state.id, in: schema))
      }
      let conflict = outcomes[key] ?? nil
      let depth = order[state.entity] ?? 0
      var values: [Value]? = state.isAlive ? candidate.values : nil
      if let conflict, let merged = values { values = conflict.applied(merged, schema: schema) }
      if let values {
        if let row = candidate.row, let release = released(row, for: values, schema: schema) {
          releases.append(.upsert(entity: state.entity, row: release))
        }
        if values != candidate.row?.values {
          stores.append(
            (depth, candidate.row == nil ? 1 : 0, key, .upsert(entity: state.entity, row: Row(values))))
        }
      } else if let row = candidate.row {
        let delete = (depth, key, ChangeSet.Operation.delete(entity: state.entity, id: state.id))
        let none = [Value](repeating: .null, count: row.count)
        if state.isAlive {
          holds.append(delete)
        } else if let release = released(row, for: none, schema: schema) {
          // A deleted row gives its unique values up before other rows take them.
          releases.append(.upsert(entity: state.entity, row: release))
          deletes.append(delete)
        } else if claims(row, schema: schema) {
          holds.append(delete)
        } else {
          deletes.append(delete)
        }
      }

      if conflict != candidate.conflict {
        if let conflict {
          plan.conflicts.append(
            .upsert(entity: SyncRecords.conflictsEntity, row: SyncRecords.row(for: conflict)))
        } else {
          plan.conflicts.append(.delete(entity: SyncRecords.conflictsEntity, id: .string(key)))
        }
      }
    }
    // Rows held back leave first and stored rows give up the unique values they change (other
    // rows may take them), then rows are stored — referenced rows before the rows that refer to
    // them, rows already stored before new ones — and deleted rows leave last, after the rows
    // that referred to them. Rows leave in the reverse order of references.
    plan.rows =
      holds.sorted { ($0.depth, $0.key) > ($1.depth, $1.key) }.map(\.operation) + releases
      + stores.sorted { ($0.depth, $0.isNew, $0.key) < ($1.depth, $1.isNew, $1.key) }.map(\.operation)
      + deletes.sorted { ($0.depth, $0.key) > ($1.depth, $1.key) }.map(\.operation)
    return plan
  }
}
