@_spi(Backend) import Coffer
import Foundation

/// The entities a synced store keeps its sync records in, beside the app's rows: the state of
/// every synced row, the rows a merge could not store as merged (``SyncConflict``), and the
/// replica's own state (its id, its clock, how far it has stamped its
/// feed and merged each peer's).
///
/// Their names start with `coffer.`; sync never syncs such an entity as app data.
enum SyncRecords {
  static let rowsEntity = "coffer.sync.rows"
  static let stateEntity = "coffer.sync.state"

  /// One row per synced row: its key, its entity and its encoded ``SyncRowState``.
  static let rowsSchema: EntitySchema? = try? EntitySchema(
    name: rowsEntity, fields: [Field("key", .string), Field("entity", .string), Field("state", .bytes)],
    idField: "key", indexes: [.on("entity")])

  /// One row per setting: `replica` (text), `clock` (number and counter), `stamped` (the feed
  /// position stamped through) and `peer:ID` (the position of peer ID's feed merged here).
  static let stateSchema: EntitySchema? = try? EntitySchema(
    name: stateEntity,
    fields: [
      Field("key", .string), Field("text", .string, isOptional: true),
      Field("number", .int, isOptional: true),
      Field("counter", .int, isOptional: true),
    ], idField: "key")

  static func isInternal(_ entity: String) -> Bool { entity.hasPrefix("coffer.") }

  static func schemas() throws -> (rows: EntitySchema, state: EntitySchema, conflicts: EntitySchema) {
    guard let rows = rowsSchema, let state = stateSchema, let conflicts = conflictsSchema else {
      throw CofferError(.backendFailure, "The sync record entities cannot be described.")
    }
    return (rows, state, conflicts)
  }

  static func row(for state: SyncRowState) -> Row {
    Row([.string(state.key), .string(state.entity), .bytes(SyncEncoding.encode(state))])
  }

  static func state(from row: Row, store: String?) throws -> SyncRowState {
    guard row.count >= 3, case .string(let entity) = row[1], case .bytes(let data) = row[2] else {
      throw CofferError(
        .corruptStore, "A sync record has the wrong shape. Sync this replica again from an empty store.",
        store: store, entity: rowsEntity)
    }
    return try SyncEncoding.decode(data, entity: entity, store: store)
  }

  /// The state of a row as a change of the feed recorded it, `nil` for another entity.
  static func state(from change: RowChange, store: String?) throws -> SyncRowState? {
    guard change.entity == rowsEntity, change.kind != .delete,
      case .string(let entity)? = change.value(of: "entity"),
      case .bytes(let data)? = change.value(of: "state")
    else { return nil }
    return try SyncEncoding.decode(data, entity: entity, store: store)
  }

  static func setting(_ key: String, text: String? = nil, number: Int64? = nil, counter: Int64? = nil) -> Row
  {
    Row([
      .string(key), text.map(Value.string) ?? .null, number.map(Value.int) ?? .null,
      counter.map(Value.int) ?? .null,
    ])
  }

  static func peerKey(_ replica: String) -> String { "peer:" + replica }

  /// The setting that holds the fingerprint of a partial replica's subscriptions as `text` (none
  /// for a replica that keeps every row): its peers' positions hold for that list only.
  static let subscriptionsKey = "subscriptions"

  /// The setting that holds the genesis stamp of the rows stored without a sync state.
  static let genesisKey = "genesis"
  /// The setting that holds the genesis stamp whose rows this store has all of (or their later
  /// states): the store's own, or one a finished bootstrap brought.
  static let completeGenesisKey = "genesis:complete"

  /// The setting a bootstrap from `replica` writes in every batch: `text` says what the batch
  /// holds (``bootstrapRows``: rows taken as they are, with the genesis stamp; ``bootstrapStates``:
  /// merged states), `number` the sender's feed position the bootstrap reaches, `counter` the
  /// batch's number.
  static func bootstrapKey(_ replica: String) -> String { "bootstrap:" + replica }
  static let bootstrapRows = "rows"
  static let bootstrapStates = "states"

  /// A clock kept in a setting: its replica as text, physical part as number, logical as counter.
  static func setting(_ key: String, clock: SyncClock) -> Row {
    setting(key, text: clock.replica, number: clock.physical, counter: clock.logical)
  }

  /// The clock a setting holds, `nil` if it holds none.
  static func clock(from row: Row) -> SyncClock? {
    guard row.count >= 4, case .string(let replica) = row[1], case .int(let physical) = row[2],
      case .int(let logical) = row[3]
    else { return nil }
    return SyncClock(physical: physical, logical: logical, replica: replica)
  }

  /// Whether a feed batch is a bootstrap batch that took rows as they are: its app rows are
  /// sync's own writes, carrying the genesis stamp.
  static func isBootstrapRows(_ changes: [RowChange]) -> Bool {
    changes.contains { change in
      guard change.entity == stateEntity, case .string(let key) = change.id, key.hasPrefix("bootstrap:")
      else {
        return false
      }
      return change.value(of: "text") == .string(bootstrapRows)
    }
  }

  /// What identifies an entity's schema for sync: its fields' names, kinds and optionality, and
  /// its id field. Two replicas sync an entity only when these agree.
  static func fingerprint(_ schema: EntitySchema) -> String {
    let fields = schema.fields.map { "\($0.name):\($0.kind)\($0.isOptional ? "?" : "")" }.sorted()
    return schema.idField.name + "|" + fields.joined(separator: ",")
  }
}
