@_spi(Backend) import Coffer
import Foundation

/// A row a replica does not store as its merged state says, because the merge broke a reference
/// or a unique index, and what it stores instead (see <doc:Sync>).
///
/// What a replica stores is a function of the row states it has merged, whatever order they came
/// in, so every replica that merged the same states records the same conflicts. A conflict lasts
/// while its cause does: when the row it refers to is stored again, or the row that holds the
/// unique values gives them up, the row is stored again and the conflict goes away.
///
/// ```swift
/// for conflict in try await replica.conflicts() where conflict.isHeldBack {
///   print("\(conflict.entity) \(conflict.id) is held back: \(conflict.reasons)")
/// }
/// ```
public struct SyncConflict: Sendable, Hashable {
  /// Why a row is not stored as merged.
  public enum Reason: Sendable, Hashable {
    /// The row refers by `field` to a row of `entity` that is not stored (deleted on another
    /// replica, or held back itself).
    case missingReference(field: String, entity: String)
    /// Another row holds the same values of these unique fields and set them first.
    case uniqueClash(fields: [String])
  }

  /// The row's entity.
  public var entity: String
  /// The row's id.
  public var id: Value
  /// Why, in the order of the entity's unique indexes, then of its references.
  public var reasons: [Reason]
  /// Whether the row is not stored at all. When it is stored, each field of a
  /// ``Reason/missingReference(field:entity:)`` (a reference whose rule is nullify) is stored as
  /// null.
  public var isHeldBack: Bool

  /// A conflict.
  public init(entity: String, id: Value, reasons: [Reason], isHeldBack: Bool) {
    self.entity = entity
    self.id = id
    self.reasons = reasons
    self.isHeldBack = isHeldBack
  }

  /// The fields stored as null instead of their merged values.
  var nulledFields: Set<String> {
    if isHeldBack { return [] }
    var fields: Set<String> = []
    for case .missingReference(let field, _) in reasons { fields.insert(field) }
    return fields
  }

  /// The row as stored for a merged state: `nil` when held back.
  func applied(_ values: [Value], schema: EntitySchema) -> [Value]? {
    if isHeldBack { return nil }
    let nulled = nulledFields
    return zip(schema.fields, values).map { nulled.contains($0.name) ? .null : $1 }
  }
}

extension SyncReplica {
  /// The rows this replica holds back or stores with a broken reference set to null, after
  /// merges that broke a reference or a unique index; by entity, then id.
  public func conflicts() async throws -> [SyncConflict] {
    try await ready()
    let records = try SyncRecords.schemas()
    return try await store.fetchRows(Query(entity: records.conflicts.name, sort: [Sort("key")])).map {
      try SyncRecords.conflict(from: $0, store: name)
    }
  }

  /// The recorded conflicts by row key.
  func recordedConflicts(_ keys: [String]? = nil) async throws -> [String: SyncConflict] {
    let records = try SyncRecords.schemas()
    let rows: [Row]
    if let keys {
      if keys.isEmpty { return [:] }
      rows = try await store.backend.get(entity: records.conflicts, ids: keys.map { .string($0) })
    } else {
      rows = try await store.fetchRows(Query(entity: records.conflicts.name))
    }
    var found: [String: SyncConflict] = [:]
    for row in rows {
      let conflict = try SyncRecords.conflict(from: row, store: name)
      found[SyncRowState.key(entity: conflict.entity, id: conflict.id)] = conflict
    }
    return found
  }
}

extension SyncRecords {
  static let conflictsEntity = "coffer.sync.conflicts"
  static let conflictVersion: UInt8 = 1

  /// One row per row held back or stored with a field set to null: its key, its entity and the
  /// encoded ``SyncConflict``.
  static let conflictsSchema: EntitySchema? = try? EntitySchema(
    name: conflictsEntity,
    fields: [Field("key", .string), Field("entity", .string), Field("conflict", .bytes)],
    idField: "key")

  static func row(for conflict: SyncConflict) -> Row {
    var writer = SyncEncoding.Writer()
    writer.byte(conflictVersion)
    writer.value(conflict.id)
    writer.byte(conflict.isHeldBack ? 1 : 0)
    writer.count(conflict.reasons.count)
    for reason in conflict.reasons {
      switch reason {
      case .missingReference(let field, let entity):
        writer.byte(0)
        writer.string(field)
        writer.string(entity)
      case .uniqueClash(let fields):
        writer.byte(1)
        writer.count(fields.count)
        for field in fields { writer.string(field) }
      }
    }
    return Row([
      .string(SyncRowState.key(entity: conflict.entity, id: conflict.id)), .string(conflict.entity),
      .bytes(Data(writer.bytes)),
    ])
  }

  static func conflict(from row: Row, store: String?) throws -> SyncConflict {
    guard row.count >= 3, case .string(let entity) = row[1], case .bytes(let data) = row[2] else {
      throw damagedConflict(store: store)
    }
    var reader = SyncEncoding.Reader(bytes: [UInt8](data))
    do {
      guard try reader.byte() == conflictVersion else { throw SyncEncoding.Reader.Damaged() }
      let id = try reader.value()
      let heldBack = try reader.byte() == 1
      var reasons: [SyncConflict.Reason] = []
      for _ in 0..<(try reader.count()) {
        if try reader.byte() == 0 {
          let field = try reader.string()
          reasons.append(.missingReference(field: field, entity: try reader.string()))
        } else {
          var fields: [String] = []
          for _ in 0..<(try reader.count()) { fields.append(try reader.string()) }
          reasons.append(.uniqueClash(fields: fields))
        }
      }
      return SyncConflict(entity: entity, id: id, reasons: reasons, isHeldBack: heldBack)
    } catch {
      throw damagedConflict(store: store)
    }
  }

  private static func damagedConflict(store: String?) -> CofferError {
    CofferError(
      .corruptStore,
      "A sync conflict record is damaged and cannot be read. Sync this replica again from an empty store.",
      store: store, entity: conflictsEntity)
  }
}
