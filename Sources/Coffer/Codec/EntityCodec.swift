/// Converts values of one ``Storable`` type to and from rows of its schema.
///
/// A ``Store`` makes one per type, the first time it sees the type, and keeps it.
public struct EntityCodec<T: Storable>: Sendable {
  /// The schema rows are positioned by.
  public let schema: EntitySchema

  /// A codec for the schema derived from `T` (see ``EntitySchema/init(for:)``).
  public init() throws { self.schema = try EntitySchema(for: T.self) }

  /// A codec for a given schema, which must have the fields `T` encodes.
  public init(schema: EntitySchema) { self.schema = schema }

  /// The row for a value, as the value encodes itself. The row is not yet checked against the
  /// schema: ``Store`` does that for every change (``QueryValidator``
  /// rejects NaN and values of the wrong kind, and rounds dates to the microsecond).
  ///
  /// - Throws: ``CofferError/Code/valueOutOfRange`` for an unsigned integer above `Int64.max`,
  ///   ``CofferError/Code/invalidSchema`` for a key the schema does not have.
  public func encode(_ value: T) throws -> Row {
    try RowEncoder(schema: schema).encode(value)
  }

  /// The value a row stands for.
  ///
  /// - Throws: ``CofferError/Code/decodingFailed`` or ``CofferError/Code/valueOutOfRange`` when
  ///   the row does not fit the type.
  public func decode(_ row: Row) throws -> T {
    try RowDecoder(schema: schema).decode(T.self, from: row)
  }
}
