import Foundation

/// One stored row, read in place: what a backend hands a decoder so that a value can be built
/// straight from the backend's own representation (a SQLite statement's columns, an LMDB
/// row's bytes) without making a ``Row`` first.
///
/// Positions are those of the entity's fields, as in ``Row``. The value returned for a position
/// is always the one ``StorageBackend/fetch(_:)`` would put in a row there; the typed accessors
/// are fast paths that return `nil` whenever the field does not hold a non-null value of their
/// kind, or the position is past the last field, and the caller then reads it with
/// `value(at:)`. A backend implements `count` and `value(at:)`, and the typed accessors it can
/// answer without building a ``Value`` (`int(at:)`, `string(at:)` and the others, which
/// ``StoredFields`` takes from `_StoredFieldsAccess`).
///
/// Fields are an object, so that handing them over copies one reference; a backend usually
/// makes one for a read and loads each row into it. An instance is only valid during the call
/// it is passed to; never keep it.
@_spi(Backend) public protocol StoredFields: _StoredFieldsAccess {
  /// The fields as a ``Row`` when they are one (``RowFields`` hands
  /// over rows), so that a decoder can read the values directly; `nil` (the default) otherwise.
  var row: Row? { get }
}

/// The reads of ``StoredFields``, under a public name that the initializer `@Storable`
/// generates can reach from inlinable code, so that reading a field in place is one call on the
/// backend's fields. A backend implements them by conforming to ``StoredFields``; nothing else
/// should name this protocol.
public protocol _StoredFieldsAccess: AnyObject {
  /// The number of fields.
  var count: Int { get }
  /// The value at a position (which is less than `count`).
  ///
  /// - Throws: ``CofferError/Code/corruptStore`` when the stored bytes are not a value of the
  ///   field's kind.
  func value(at position: Int) throws -> Value
  /// Whether the field at a position is null (`false` past the last field).
  func isNull(at position: Int) -> Bool
  /// The integer at a position, or `nil` if the field holds anything else or null.
  func int(at position: Int) -> Int64?
  /// The double at a position, or `nil` if the field holds anything else or null.
  func double(at position: Int) -> Double?
  /// The boolean at a position, or `nil` if the field holds anything else or null.
  func bool(at position: Int) -> Bool?
  /// The string at a position, or `nil` if the field holds anything else or null.
  func string(at position: Int) -> String?
  /// The date at a position, or `nil` if the field holds anything else or null.
  func date(at position: Int) -> Date?
  /// The UUID at a position, or `nil` if the field holds anything else or null.
  func uuid(at position: Int) -> UUID?
}

@_spi(Backend) extension StoredFields {
  /// `nil`: the fields are not a ``Row``.
  public var row: Row? { nil }
  /// The value at a position, or `nil` past the last field or when it cannot be read.
  private func valueIfAny(at position: Int) -> Value? {
    position < count ? try? value(at: position) : nil
  }
  /// Reads the value and checks for null.
  public func isNull(at position: Int) -> Bool { valueIfAny(at: position)?.isNull ?? false }
  /// Reads the value as an integer.
  public func int(at position: Int) -> Int64? {
    guard case .int(let number) = valueIfAny(at: position) else { return nil }
    return number
  }
  /// Reads the value as a double.
  public func double(at position: Int) -> Double? {
    guard case .double(let number) = valueIfAny(at: position) else { return nil }
    return number
  }
  /// Reads the value as a boolean.
  public func bool(at position: Int) -> Bool? {
    guard case .bool(let flag) = valueIfAny(at: position) else { return nil }
    return flag
  }
  /// Reads the value as a string.
  public func string(at position: Int) -> String? {
    guard case .string(let text) = valueIfAny(at: position) else { return nil }
    return text
  }
  /// Reads the value as a date.
  public func date(at position: Int) -> Date? {
    guard case .date(let date) = valueIfAny(at: position) else { return nil }
    return date
  }
  /// Reads the value as a UUID.
  public func uuid(at position: Int) -> UUID? {
    guard case .uuid(let uuid) = valueIfAny(at: position) else { return nil }
    return uuid
  }
}

/// A ``Row`` handed over as ``StoredFields``: what ``InMemoryTables/read(_:_:)``
/// passes, and what a backend passes for a row it had to decode first. One instance can carry
/// row after row.
@_spi(Backend) public final class RowFields: StoredFields {
  /// The row being handed over.
  public var current: Row

  /// Fields holding `row`.
  public init(_ row: Row) { current = row }

  /// The row's number of values.
  public var count: Int { current.values.count }
  /// The row itself.
  public var row: Row? { current }
  /// The value at a position.
  public func value(at position: Int) -> Value { current.values[position] }

  /// Hands over each row in turn, through one instance.
  public static func handOver(_ rows: [Row], to visit: (any StoredFields) throws -> Void) rethrows {
    guard let first = rows.first else { return }
    let fields = RowFields(first)
    for row in rows {
      fields.current = row
      try visit(fields)
    }
  }
}

@_spi(Backend) extension Row {
  /// The row of every value of stored fields (the fields themselves when they are a row).
  public init(_ fields: any StoredFields) throws {
    if let row = fields.row {
      self = row
      return
    }
    var values: [Value] = []
    values.reserveCapacity(fields.count)
    for position in 0..<fields.count { values.append(try fields.value(at: position)) }
    self.init(values)
  }
}
