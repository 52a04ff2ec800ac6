/// Which stored record a graph entry stands for: an entity name and an id.
///
/// Events and errors name records by their key, so one stream can carry changes of every type.
///
/// ```swift
/// let key = ModelKey(Note.self, id: 7)   // Note 7
/// ```
public struct ModelKey: Sendable, Hashable, CustomStringConvertible {
  /// The entity's stored name.
  public let entity: String
  /// The record's id as a stored value.
  public let id: Value

  /// The key of a record of an entity.
  public init(entity: String, id: Value) {
    self.entity = entity
    self.id = id
  }

  /// The key of the value of a ``Storable`` type with an id.
  public init<T: Storable>(_ type: T.Type, id: T.ID) {
    self.init(entity: T.entityName, id: id.storedValue)
  }

  /// `Entity id`, e.g. `Note 7`.
  public var description: String { "\(entity) \(id)" }
}
