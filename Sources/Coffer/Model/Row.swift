/// One stored record: its values in the order of its entity's fields.
///
/// A row carries no field names; ``EntitySchema`` maps names to positions once, so reading or
/// writing a row never hashes a name.
public struct Row: Sendable, Hashable {
  /// The values, one per field of the entity, in field order.
  public var values: [Value]

  /// A row from values in field order.
  public init(_ values: [Value]) { self.values = values }

  /// The value at a field position.
  @inlinable
  public subscript(position: Int) -> Value {
    get { values[position] }
    set { values[position] = newValue }
  }

  /// The number of values.
  public var count: Int { values.count }
}
