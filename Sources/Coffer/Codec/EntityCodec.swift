/// Converts values of one ``Storable`` type to and from rows of its schema: the codec the
/// store keeps for each type (``EntityCodec`` is its face for tests and benchmarks).
///
/// A ``Store`` makes one per type, the first time it sees the type, and keeps it. For a type
/// that declares its own fields (`@Storable`), the codec uses the generated code; for any other
/// type, or when ``RowCodecChoice/current`` says so, it goes through `Codable`.
@usableFromInline package struct RowCodec<T: Storable>: Sendable {
  /// The schema rows are positioned by.
  @usableFromInline package let schema: EntitySchema
  /// Whether the codec uses the type's generated row code rather than `Codable`.
  @usableFromInline package let usesGeneratedCode: Bool

  /// A codec for `T`'s schema, using the row code ``RowCodecChoice/current`` picks.
  package init() throws { try self.init(using: RowCodecChoice.current) }

  /// A codec for `T`'s schema that uses the generated row code when `choice` is
  /// ``RowCodecChoice/generated`` and `T` has it, and `Codable` otherwise.
  package init(using choice: RowCodecChoice) throws {
    if choice == .generated, let fields = try T._storedFields() {
      self.schema = try EntitySchema(for: T.self)
      self.usesGeneratedCode = schema.fields.map(\.name) == fields.map(\.name)
    } else {
      self.schema = try EntitySchema(probing: T.self)
      self.usesGeneratedCode = false
    }
  }

  /// A codec for a given schema, which must have the fields `T` encodes. The generated row code
  /// is used only when the schema's fields are the ones `T` declares, in the same order.
  package init(schema: EntitySchema) {
    self.schema = schema
    let declared = (try? T._storedFields())?.map(\.name)
    self.usesGeneratedCode = declared == schema.fields.map(\.name)
  }

  /// The row for a value, as the value encodes itself. The row is not yet checked against the
  /// schema: ``Store`` does that for every change (`QueryValidator`
  /// rejects NaN and values of the wrong kind, and rounds dates to the microsecond).
  ///
  /// - Throws: ``CofferError/Code/valueOutOfRange`` for an unsigned integer above `Int64.max`,
  ///   ``CofferError/Code/invalidSchema`` for a key the schema does not have.
  @inlinable
  package func encode(_ value: T) throws -> Row {
    if usesGeneratedCode { return try value._storedRow() }
    return try encodeThroughCodable(value)
  }

  @usableFromInline
  func encodeThroughCodable(_ value: T) throws -> Row { try RowEncoder(schema: schema).encode(value) }

  /// The value a row stands for.
  ///
  /// - Throws: ``CofferError/Code/decodingFailed`` or ``CofferError/Code/valueOutOfRange`` when
  ///   the row does not fit the type.
  @inlinable
  package func decode(_ row: Row) throws -> T {
    if usesGeneratedCode { return try T(_storedRow: StoredRow(row)) }
    return try decodeThroughCodable(row)
  }

  /// The value a stored row stands for: a row's values, or a backend's row read in place (see
  /// ``StorageBackend/read(_:_:)``).
  ///
  /// - Throws: as ``decode(_:)-(Row)``, and ``CofferError/Code/corruptStore`` when the backend
  ///   cannot read a stored value.
  @inlinable
  package func decode(_ row: StoredRow) throws -> T {
    if usesGeneratedCode { return try T(_storedRow: row) }
    return try decodeThroughCodable(row)
  }

  /// The value a backend's row read in place stands for, for the reads that are not inlined.
  package func decode(_ fields: any StoredFields) throws -> T { try decode(StoredRow(fields)) }

  @usableFromInline
  func decodeThroughCodable(_ row: StoredRow) throws -> T { try decodeThroughCodable(row.values()) }

  @usableFromInline
  func decodeThroughCodable(_ row: Row) throws -> T {
    try RowDecoder(schema: schema).decode(T.self, from: row)
  }
}

/// The row codec a store uses for one ``Storable`` type, for tests and benchmarks that compare
/// the generated row code with `Codable` (the conformance suite, `coffer-bench --codec`).
///
/// Converts values to and from rows of the type's schema, exactly as a ``Store`` does: for a
/// type that declares its own fields (`@Storable`), with the generated code; for any other type,
/// or when ``RowCodecChoice/current`` says so, through `Codable`.
@_spi(Backend) public struct EntityCodec<T: Storable>: Sendable {
  @usableFromInline let codec: RowCodec<T>

  /// The schema rows are positioned by.
  public var schema: EntitySchema { codec.schema }
  /// Whether the codec uses the type's generated row code rather than `Codable`.
  public var usesGeneratedCode: Bool { codec.usesGeneratedCode }

  /// A codec for `T`'s schema, using the row code ``RowCodecChoice/current`` picks.
  public init() throws { codec = try RowCodec() }

  /// A codec for `T`'s schema that uses the generated row code when `choice` is
  /// ``RowCodecChoice/generated`` and `T` has it, and `Codable` otherwise.
  public init(using choice: RowCodecChoice) throws { codec = try RowCodec(using: choice) }

  /// A codec for a given schema, which must have the fields `T` encodes. The generated row code
  /// is used only when the schema's fields are the ones `T` declares, in the same order.
  public init(schema: EntitySchema) { codec = RowCodec(schema: schema) }

  /// The row for a value, as the value encodes itself, not yet checked against the schema.
  ///
  /// - Throws: ``CofferError/Code/valueOutOfRange`` for an unsigned integer above `Int64.max`,
  ///   ``CofferError/Code/invalidSchema`` for a key the schema does not have.
  @inlinable public func encode(_ value: T) throws -> Row { try codec.encode(value) }

  /// The value a row stands for.
  ///
  /// - Throws: ``CofferError/Code/decodingFailed`` or ``CofferError/Code/valueOutOfRange`` when
  ///   the row does not fit the type.
  @inlinable public func decode(_ row: Row) throws -> T { try codec.decode(row) }

  /// The value a row read in place stands for (see ``StorageBackend/read(_:_:)``).
  @inlinable public func decode(_ fields: any StoredFields) throws -> T {
    try codec.decode(StoredRow(fields))
  }
}

/// Which row code a new ``EntityCodec`` uses for types that have generated code.
///
/// Stores use ``generated`` unless told otherwise. Run code under
/// `RowCodecChoice.$current.withValue(.codable) { … }` to make the stores it creates encode
/// every type through `Codable` — to compare the two, as the conformance suite and the
/// benchmarks do.
@_spi(Backend) public enum RowCodecChoice: Sendable, Hashable, CaseIterable {
  /// The code `@Storable` generates, for types that have it.
  case generated
  /// The `Codable` conformance, for every type.
  case codable

  /// The choice in force for the current task.
  @TaskLocal public static var current: RowCodecChoice = .generated
}
