/// A stored row as ``Storable/init(storedRow:)`` reads it: the values of a ``Row``, or a
/// backend's row read in place, without building a ``Row`` first.
///
/// Only the initializer `@Storable` generates reads one, through the `CofferMacros` product; to
/// decode a ``Row`` yourself, wrap it with ``init(_:)-(Row)``. A stored row read in place is
/// valid only during the call it is passed to: never keep one.
public struct StoredRow {
  let source: Source

  enum Source {
    case values(Row)
    case fields(any StoredFields)
  }

  /// The stored row of a row's values, in the order of the entity's fields.
  public init(_ row: Row) { source = .values(row) }

  /// A backend's row read in place; the row itself when the fields hand over a ``Row``.
  @_spi(Backend) public init(_ fields: any StoredFields) {
    if let row = fields.row {
      source = .values(row)
    } else {
      source = .fields(fields)
    }
  }

  /// The row's values, when it is a ``Row``.
  @_spi(Backend) public var row: Row? {
    if case .values(let row) = source { return row }
    return nil
  }

  /// The backend's fields, when the row is read in place.
  @_spi(Backend) public var fields: (any StoredFields)? {
    if case .fields(let fields) = source { return fields }
    return nil
  }

  /// The value at a position, for the typed reads that index rows by id.
  ///
  /// - Throws: ``CofferError/Code/corruptStore`` when the backend cannot read a stored value.
  @usableFromInline func value(at position: Int) throws -> Value {
    switch source {
    case .values(let row): row.values[position]
    case .fields(let fields): try fields.value(at: position)
    }
  }

  /// Every value, as a ``Row``.
  ///
  /// - Throws: ``CofferError/Code/corruptStore`` when the backend cannot read a stored value.
  @_spi(Backend) public func values() throws -> Row {
    switch source {
    case .values(let row): row
    case .fields(let fields): try Row(fields)
    }
  }
}
