@_spi(Backend) import Coffer
import Foundation

/// Reads a ``Coffer/StoredRow`` for the `init(_storedRow:)` that `@Storable` generates, value by
/// value: each scalar through the backend's typed accessor when the row is read in place, as a
/// ``Coffer/Value`` otherwise. You do not call it yourself.
///
/// The compiler picks the `read` that matches the property assigned to. Every failure is a
/// ``Coffer/CofferError/Code/decodingFailed`` (or ``Coffer/CofferError/Code/valueOutOfRange``)
/// naming the entity, the id and the field.
public struct StoredRowReader {
  /// The row's values when the row is a ``Coffer/Row``; `nil` when it is read in place.
  @usableFromInline let values: [Value]
  /// The backend's fields when the row is read in place.
  @usableFromInline let fields: (any _StoredFieldsAccess)?
  @usableFromInline let entity: String
  @usableFromInline let idPosition: Int

  /// A reader of a stored row of an entity whose id is at `idPosition`.
  @inlinable public init(_ row: StoredRow, entity: String, idPosition: Int) {
    self.values = row.rowValues?.values ?? []
    self.fields = row.inPlace
    self.entity = entity
    self.idPosition = idPosition
  }

  /// Whether the value at a position is null: an optional property's `nil`, read inline.
  @inlinable @inline(__always) func isNull(_ position: Int) -> Bool {
    if position < values.count, case .null = values[position] { return true }
    return fields?.isNull(at: position) ?? false
  }

  // MARK: Scalars, one pair (plain and optional) per stored scalar type

  // A row's value of the property's kind converts inline, and so does a row read in place
  // through the backend's typed accessor; anything else (a null, a value of another kind, a
  // type with no typed accessor) takes the non-inlinable path below, which makes the errors.

  /// A `Bool` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Bool {
    if position < values.count, case .bool(let value) = values[position] { return value }
    if let value = fields?.bool(at: position) { return value }
    return try plainBool(position, name)
  }
  /// An optional `Bool` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Bool? {
    if position < values.count, case .bool(let value) = values[position] { return value }
    if let value = fields?.bool(at: position) { return value }
    if isNull(position) { return nil }

    return try optionalBool(position, name)
  }
  /// A `String` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> String {
    if position < values.count, case .string(let value) = values[position] { return value }
    if let value = fields?.string(at: position) { return value }
    return try plainString(position, name)
  }
  /// An optional `String` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> String? {
    if position < values.count, case .string(let value) = values[position] { return value }
    if let value = fields?.string(at: position) { return value }
    if isNull(position) { return nil }

    return try optionalString(position, name)
  }
  /// A `Double` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Double {
    if position < values.count, case .double(let value) = values[position] { return value }
    if let value = fields?.double(at: position) { return value }
    return try plainDouble(position, name)
  }
  /// An optional `Double` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Double? {
    if position < values.count, case .double(let value) = values[position] { return value }
    if let value = fields?.double(at: position) { return value }
    if isNull(position) { return nil }

    return try optionalDouble(position, name)
  }
  /// A `Float` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Float {
    if position < values.count, case .double(let value) = values[position] { return Float(value) }
    if let value = fields?.double(at: position).map(Float.init) { return value }
    return try plainFloat(position, name)
  }
  /// An optional `Float` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Float? {
    if position < values.count, case .double(let value) = values[position] { return Float(value) }
    if let value = fields?.double(at: position).map(Float.init) { return value }
    if isNull(position) { return nil }

    return try optionalFloat(position, name)
  }
  /// A `Date` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Date {
    if position < values.count, case .date(let value) = values[position] { return value }
    if let value = fields?.date(at: position) { return value }
    return try plainDate(position, name)
  }
  /// An optional `Date` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Date? {
    if position < values.count, case .date(let value) = values[position] { return value }
    if let value = fields?.date(at: position) { return value }
    if isNull(position) { return nil }

    return try optionalDate(position, name)
  }
  /// An `UUID` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> UUID {
    if position < values.count, case .uuid(let value) = values[position] { return value }
    if let value = fields?.uuid(at: position) { return value }
    return try plainUUID(position, name)
  }
  /// An optional `UUID` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> UUID? {
    if position < values.count, case .uuid(let value) = values[position] { return value }
    if let value = fields?.uuid(at: position) { return value }
    if isNull(position) { return nil }

    return try optionalUUID(position, name)
  }
  /// A `Data` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Data {
    if position < values.count, case .bytes(let value) = values[position] { return value }
    return try plainData(position, name)
  }
  /// An optional `Data` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Data? {
    if position < values.count, case .bytes(let value) = values[position] { return value }
    if isNull(position) { return nil }

    return try optionalData(position, name)
  }
  /// An `URL` property.
  public func read(_ position: Int, _ name: String) throws -> URL { try scalar(position, name) }
  /// An optional `URL` property.
  public func read(_ position: Int, _ name: String) throws -> URL? { try optionalScalar(position, name) }
  /// An `Int` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Int {
    if position < values.count, case .int(let value) = values[position],
      let exact = Int(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(Int.init(exactly:)) { return value }
    return try plainInt(position, name)
  }
  /// An optional `Int` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Int? {
    if position < values.count, case .int(let value) = values[position],
      let exact = Int(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(Int.init(exactly:)) { return value }
    if isNull(position) { return nil }

    return try optionalInt(position, name)
  }
  /// An `Int8` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Int8 {
    if position < values.count, case .int(let value) = values[position],
      let exact = Int8(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(Int8.init(exactly:)) { return value }
    return try plainInt8(position, name)
  }
  /// An optional `Int8` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Int8? {
    if position < values.count, case .int(let value) = values[position],
      let exact = Int8(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(Int8.init(exactly:)) { return value }
    if isNull(position) { return nil }

    return try optionalInt8(position, name)
  }
  /// An `Int16` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Int16 {
    if position < values.count, case .int(let value) = values[position],
      let exact = Int16(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(Int16.init(exactly:)) { return value }
    return try plainInt16(position, name)
  }
  /// An optional `Int16` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Int16? {
    if position < values.count, case .int(let value) = values[position],
      let exact = Int16(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(Int16.init(exactly:)) { return value }
    if isNull(position) { return nil }

    return try optionalInt16(position, name)
  }
  /// An `Int32` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Int32 {
    if position < values.count, case .int(let value) = values[position],
      let exact = Int32(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(Int32.init(exactly:)) { return value }
    return try plainInt32(position, name)
  }
  /// An optional `Int32` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Int32? {
    if position < values.count, case .int(let value) = values[position],
      let exact = Int32(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(Int32.init(exactly:)) { return value }
    if isNull(position) { return nil }

    return try optionalInt32(position, name)
  }
  /// An `Int64` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Int64 {
    if position < values.count, case .int(let value) = values[position] { return value }
    if let value = fields?.int(at: position) { return value }
    return try plainInt64(position, name)
  }
  /// An optional `Int64` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> Int64? {
    if position < values.count, case .int(let value) = values[position] { return value }
    if let value = fields?.int(at: position) { return value }
    if isNull(position) { return nil }

    return try optionalInt64(position, name)
  }
  /// An `UInt` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> UInt {
    if position < values.count, case .int(let value) = values[position],
      let exact = UInt(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(UInt.init(exactly:)) { return value }
    return try plainUInt(position, name)
  }
  /// An optional `UInt` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> UInt? {
    if position < values.count, case .int(let value) = values[position],
      let exact = UInt(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(UInt.init(exactly:)) { return value }
    if isNull(position) { return nil }

    return try optionalUInt(position, name)
  }
  /// An `UInt8` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> UInt8 {
    if position < values.count, case .int(let value) = values[position],
      let exact = UInt8(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(UInt8.init(exactly:)) { return value }
    return try plainUInt8(position, name)
  }
  /// An optional `UInt8` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> UInt8? {
    if position < values.count, case .int(let value) = values[position],
      let exact = UInt8(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(UInt8.init(exactly:)) { return value }
    if isNull(position) { return nil }

    return try optionalUInt8(position, name)
  }
  /// An `UInt16` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> UInt16 {
    if position < values.count, case .int(let value) = values[position],
      let exact = UInt16(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(UInt16.init(exactly:)) { return value }
    return try plainUInt16(position, name)
  }
  /// An optional `UInt16` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> UInt16? {
    if position < values.count, case .int(let value) = values[position],
      let exact = UInt16(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(UInt16.init(exactly:)) { return value }
    if isNull(position) { return nil }

    return try optionalUInt16(position, name)
  }
  /// An `UInt32` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> UInt32 {
    if position < values.count, case .int(let value) = values[position],
      let exact = UInt32(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(UInt32.init(exactly:)) { return value }
    return try plainUInt32(position, name)
  }
  /// An optional `UInt32` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> UInt32? {
    if position < values.count, case .int(let value) = values[position],
      let exact = UInt32(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(UInt32.init(exactly:)) { return value }
    if isNull(position) { return nil }

    return try optionalUInt32(position, name)
  }
  /// An `UInt64` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> UInt64 {
    if position < values.count, case .int(let value) = values[position],
      let exact = UInt64(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(UInt64.init(exactly:)) { return value }
    return try plainUInt64(position, name)
  }
  /// An optional `UInt64` property.
  @inlinable @inline(__always) public func read(_ position: Int, _ name: String) throws -> UInt64? {
    if position < values.count, case .int(let value) = values[position],
      let exact = UInt64(exactly: value)
    {
      return exact
    }
    if let value = fields?.int(at: position).flatMap(UInt64.init(exactly:)) { return value }
    if isNull(position) { return nil }

    return try optionalUInt64(position, name)
  }

  // MARK: The paths that are not inlined

  @usableFromInline func plainBool(_ position: Int, _ name: String) throws -> Bool {
    try scalar(position, name)
  }
  @usableFromInline func optionalBool(_ position: Int, _ name: String) throws -> Bool? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainString(_ position: Int, _ name: String) throws -> String {
    try scalar(position, name)
  }
  @usableFromInline func optionalString(_ position: Int, _ name: String) throws -> String? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainDouble(_ position: Int, _ name: String) throws -> Double {
    try scalar(position, name)
  }
  @usableFromInline func optionalDouble(_ position: Int, _ name: String) throws -> Double? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainFloat(_ position: Int, _ name: String) throws -> Float {
    try scalar(position, name)
  }
  @usableFromInline func optionalFloat(_ position: Int, _ name: String) throws -> Float? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainDate(_ position: Int, _ name: String) throws -> Date {
    try scalar(position, name)
  }
  @usableFromInline func optionalDate(_ position: Int, _ name: String) throws -> Date? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainUUID(_ position: Int, _ name: String) throws -> UUID {
    try scalar(position, name)
  }
  @usableFromInline func optionalUUID(_ position: Int, _ name: String) throws -> UUID? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainData(_ position: Int, _ name: String) throws -> Data {
    try scalar(position, name)
  }
  @usableFromInline func optionalData(_ position: Int, _ name: String) throws -> Data? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainInt(_ position: Int, _ name: String) throws -> Int {
    try scalar(position, name)
  }
  @usableFromInline func optionalInt(_ position: Int, _ name: String) throws -> Int? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainInt8(_ position: Int, _ name: String) throws -> Int8 {
    try scalar(position, name)
  }
  @usableFromInline func optionalInt8(_ position: Int, _ name: String) throws -> Int8? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainInt16(_ position: Int, _ name: String) throws -> Int16 {
    try scalar(position, name)
  }
  @usableFromInline func optionalInt16(_ position: Int, _ name: String) throws -> Int16? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainInt32(_ position: Int, _ name: String) throws -> Int32 {
    try scalar(position, name)
  }
  @usableFromInline func optionalInt32(_ position: Int, _ name: String) throws -> Int32? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainInt64(_ position: Int, _ name: String) throws -> Int64 {
    try scalar(position, name)
  }
  @usableFromInline func optionalInt64(_ position: Int, _ name: String) throws -> Int64? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainUInt(_ position: Int, _ name: String) throws -> UInt {
    try scalar(position, name)
  }
  @usableFromInline func optionalUInt(_ position: Int, _ name: String) throws -> UInt? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainUInt8(_ position: Int, _ name: String) throws -> UInt8 {
    try scalar(position, name)
  }
  @usableFromInline func optionalUInt8(_ position: Int, _ name: String) throws -> UInt8? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainUInt16(_ position: Int, _ name: String) throws -> UInt16 {
    try scalar(position, name)
  }
  @usableFromInline func optionalUInt16(_ position: Int, _ name: String) throws -> UInt16? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainUInt32(_ position: Int, _ name: String) throws -> UInt32 {
    try scalar(position, name)
  }
  @usableFromInline func optionalUInt32(_ position: Int, _ name: String) throws -> UInt32? {
    try optionalScalar(position, name)
  }
  @usableFromInline func plainUInt64(_ position: Int, _ name: String) throws -> UInt64 {
    try scalar(position, name)
  }
  @usableFromInline func optionalUInt64(_ position: Int, _ name: String) throws -> UInt64? {
    try optionalScalar(position, name)
  }

  // MARK: Enums and everything else

  /// An enum stored as its raw value.
  public func read<V: RawRepresentable & Decodable>(_ position: Int, _ name: String) throws -> V
  where V.RawValue: StoredScalar {
    let value = try stored(position, name)
    guard let raw = V.RawValue(storedScalar: value), let result = V(rawValue: raw) else {
      throw mismatch(value, V.self, name)
    }
    return result
  }

  /// An optional enum stored as its raw value.
  public func read<V: RawRepresentable & Decodable>(_ position: Int, _ name: String) throws -> V?
  where V.RawValue: StoredScalar {
    let value = try stored(position, name)
    if case .null = value { return nil }
    guard let raw = V.RawValue(storedScalar: value), let result = V(rawValue: raw) else {
      throw mismatch(value, V.self, name)
    }
    return result
  }

  /// Any other `Codable` property, optional or not.
  @_disfavoredOverload
  public func read<V: Decodable>(_ position: Int, _ name: String) throws -> V {
    let value = try stored(position, name)
    if case .null = value, let optional = V.self as? any NullableField.Type, let none = optional.none as? V {
      return none
    }
    return try decodeDocumentOrScalar(value, as: V.self, name)
  }

  // MARK: Reading

  /// A scalar, through the backend's typed accessor first.
  private func scalar<V: StoredScalar>(_ position: Int, _ name: String) throws -> V {
    let value = try stored(position, name)
    guard let result = V(storedScalar: value) else { throw mismatch(value, V.self, name) }
    return result
  }

  /// An optional scalar, through the backend's typed accessor first.
  private func optionalScalar<V: StoredScalar>(_ position: Int, _ name: String) throws -> V? {
    let value = try stored(position, name)
    if case .null = value { return nil }
    guard let result = V(storedScalar: value) else { throw mismatch(value, V.self, name) }
    return result
  }

  /// The stored value at a position, or a missing-field error.
  private func stored(_ position: Int, _ name: String) throws -> Value {
    guard let fields else {
      guard position < values.count else { throw missing(name) }
      return values[position]
    }
    guard position < fields.count else { throw missing(name) }
    return try fields.value(at: position)
  }

  /// The id's description, for errors.
  private var idText: String? {
    guard let fields else { return idPosition < values.count ? values[idPosition].description : nil }
    guard idPosition < fields.count, let id = try? fields.value(at: idPosition) else {
      return nil
    }
    return id.description
  }

  private func decodeDocumentOrScalar<V: Decodable>(_ value: Value, as type: V.Type, _ name: String) throws
    -> V
  {
    if case .document(let data) = value {
      do {
        return try DocumentCoding.decode(type, from: data)
      } catch {
        throw CofferError(
          .decodingFailed, "The stored document \(entity).\(name) does not decode as \(V.self): \(error)",
          entity: entity, id: idText, field: name, underlying: error)
      }
    }
    if let scalar = type as? any StoredScalar.Type {
      guard let result = scalar.init(storedScalar: value) as? V else { throw mismatch(value, V.self, name) }
      return result
    }
    do {
      return try V(from: StoredScalarDecoder(value: value))
    } catch {
      throw mismatch(value, V.self, name)
    }
  }

  private func missing(_ name: String) -> CofferError {
    CofferError(
      .decodingFailed, "\(entity) has no stored field '\(name)'. Add it to the schema or make it optional.",
      entity: entity, id: idText, field: name)
  }

  private func mismatch(_ value: Value, _ type: Any.Type, _ name: String) -> CofferError {
    if case .int = value, type is any FixedWidthInteger.Type {
      return CofferError(
        .valueOutOfRange, "The stored \(entity).\(name) value does not fit in \(type).",
        entity: entity, id: idText, field: name)
    }
    return CofferError(
      .decodingFailed,
      "\(entity).\(name) is stored as \(value.kind?.description ?? "null") but read as \(type).",
      entity: entity, id: idText, field: name)
  }
}

/// Optionals, which read `nil` from a null field.
protocol NullableField { static var none: Self { get } }
extension Optional: NullableField {}
/// A decoder over one stored scalar, for types that decode themselves from a single value.
struct StoredScalarDecoder: Decoder, SingleValueDecodingContainer {
  let value: Value
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  private struct Mismatch: Error {}

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    throw Mismatch()
  }
  func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Mismatch() }
  func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

  func decodeNil() -> Bool { value.isNull }
  func decode(_ type: Bool.Type) throws -> Bool { try scalar(type) }
  func decode(_ type: String.Type) throws -> String { try scalar(type) }
  func decode(_ type: Double.Type) throws -> Double { try scalar(type) }
  func decode(_ type: Float.Type) throws -> Float { try scalar(type) }
  func decode(_ type: Int.Type) throws -> Int { try scalar(type) }
  func decode(_ type: Int8.Type) throws -> Int8 { try scalar(type) }
  func decode(_ type: Int16.Type) throws -> Int16 { try scalar(type) }
  func decode(_ type: Int32.Type) throws -> Int32 { try scalar(type) }
  func decode(_ type: Int64.Type) throws -> Int64 { try scalar(type) }
  func decode(_ type: UInt.Type) throws -> UInt { try scalar(type) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try scalar(type) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try scalar(type) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try scalar(type) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try scalar(type) }
  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    if let scalar = type as? any StoredScalar.Type {
      guard let result = scalar.init(storedScalar: value) as? T else { throw Mismatch() }
      return result
    }
    return try T(from: self)
  }

  private func scalar<T: StoredScalar>(_ type: T.Type) throws -> T {
    guard let result = T(storedScalar: value) else { throw Mismatch() }
    return result
  }
}
