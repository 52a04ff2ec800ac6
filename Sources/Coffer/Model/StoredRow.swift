/// A stored row as `Storable.init(_storedRow:)` reads it: the values of a ``Row``, or a
/// backend's row read in place, without building a ``Row`` first.
///
/// Only the initializer `@Storable` generates reads one, through the `CofferMacros` product; to
/// decode a ``Row`` yourself, wrap it with ``init(_:)-(Row)``. A stored row read in place is
/// valid only during the call it is passed to: never keep one.
public struct StoredRow {
  /// The row's values, when the row is a ``Row``: generated initializers read these inline.
  @usableFromInline package let rowValues: Row?
  /// The backend's fields, when the row is read in place: generated initializers call their
  /// typed reads inline.
  @usableFromInline package let inPlace: (any _StoredFieldsAccess)?

  /// The stored row of a row's values, in the order of the entity's fields.
  @inlinable public init(_ row: Row) {
    rowValues = row
    inPlace = nil
  }

  /// A backend's row read in place; the row itself when the fields hand over a ``Row``.
  @_spi(Backend) public init(_ fields: any StoredFields) {
    if let row = fields.row {
      rowValues = row
      inPlace = nil
    } else {
      rowValues = nil
      inPlace = fields
    }
  }

  /// The row's values, when it is a ``Row``.
  @_spi(Backend) public var row: Row? { rowValues }

  /// The backend's fields, when the row is read in place.
  @_spi(Backend) public var fields: (any StoredFields)? { inPlace as? any StoredFields }

  /// The value at a position, for the typed reads that index rows by id.
  ///
  /// - Throws: ``CofferError/Code/corruptStore`` when the backend cannot read a stored value.
  @usableFromInline func value(at position: Int) throws -> Value {
    if let rowValues { return rowValues.values[position] }
    guard let inPlace else { return .null }
    return try inPlace.value(at: position)
  }

  /// Every value, as a ``Row``.
  ///
  /// - Throws: ``CofferError/Code/corruptStore`` when the backend cannot read a stored value.
  @_spi(Backend) public func values() throws -> Row {
    if let rowValues { return rowValues }
    guard let inPlace else { return Row([]) }
    return Row(try (0..<inPlace.count).map { try inPlace.value(at: $0) })
  }
}
