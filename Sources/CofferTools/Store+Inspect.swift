@_spi(Backend) import Coffer

/// What a store holds, described without the app's types: ``Store/inspect()``, and what
/// `coffer inspect` prints.
public struct StoreInspection: Sendable, Hashable, Codable {
  /// One stored entity.
  public struct Entity: Sendable, Hashable, Codable {
    /// The schema its rows are stored in: fields with kinds, optionality and defaults,
    /// indexes and unique constraints.
    public var schema: EntitySchema
    /// How many rows it holds.
    public var rows: Int
  }

  /// The store's name: its URL without secrets.
  public var store: String
  /// The backend's type (`SQLiteBackend`).
  public var backend: String
  /// How its backend behaves (``BackendCapabilities``) and the abilities it adopts
  /// (``SnapshotReading`` and the others), by name.
  public var capabilities: [String]
  /// What the backend says of its storage: format version, size, details.
  public var storage: StorageDescription
  /// Every stored entity, sorted by name.
  public var entities: [Entity]
}

extension Store {
  /// Describes the store: its backend's capabilities and storage, and every entity it holds
  /// with its exact stored schema and row count. Reads no rows but to count them.
  public func inspect() async throws -> StoreInspection {
    let storage = try await rethrowing {
      try await (backend as? any StorageInspecting)?.describeStorage() ?? StorageDescription()
    }
    var entities: [StoreInspection.Entity] = []
    for schema in try await storedSchemas(named: nil) {
      let rows = try await rethrowing { try await backend.count(RowReader.all(of: schema)) }
      entities.append(StoreInspection.Entity(schema: schema, rows: rows))
    }
    return StoreInspection(
      store: backend.name, backend: String(describing: type(of: backend)),
      capabilities: backend.capabilities.names + backend.abilityNames,
      storage: storage, entities: entities)
  }
}
