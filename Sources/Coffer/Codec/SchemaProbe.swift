import Foundation

/// What the probe has seen so far. Only ever used by one probe on one task.
final class ProbeRecorder {
  struct ProbedField {
    var name: String
    var kind: FieldKind
    var isOptional: Bool
  }
  let entity: String
  var fields: [ProbedField] = []
  /// Keys for which `decodeNil` was asked before `decode`: optional fields.
  var pendingOptional: Set<String> = []
  init(entity: String) { self.entity = entity }

  func record(_ name: String, _ kind: FieldKind, optional: Bool) {
    if let existing = fields.firstIndex(where: { $0.name == name }) {
      if optional { fields[existing].isOptional = true }
      return
    }
    fields.append(ProbedField(name: name, kind: kind, isOptional: optional))
  }

  /// The kind a non-scalar type is stored as, and a placeholder instance of it.
  func probe<T: Decodable>(_ type: T.Type, field: String) throws -> (FieldKind, T?) {
    if let kind = ScalarTypes.kind(of: type) {
      return (kind, nil)
    }
    let single = SingleValueProbe()
    let instance = try? T(from: ProbeDecoder(recorder: nil, permissive: true, single: single))
    let kind = single.kind ?? .document
    if let instance { return (kind, instance) }
    if let cases = type as? any CaseIterable.Type, let first = Self.firstCase(cases) as? T {
      return (kind, first)
    }
    throw CofferError(
      .invalidSchema,
      "Cannot derive the schema of field '\(field)' of '\(entity)': \(T.self) rejected every placeholder value. "
        + "Make \(T.self) CaseIterable (enums with raw values) or give its init(from:) a value it accepts.",
      entity: entity, field: field)
  }

  private static func firstCase<C: CaseIterable>(_ type: C.Type) -> Any? { type.allCases.first }
}

/// Records which scalar a nested type decodes itself from, when it uses a single value container.
final class SingleValueProbe {
  var kind: FieldKind?
}

/// A decoder that answers every request with a placeholder and records what was asked.
///
/// With a recorder it probes the top-level record; without one (`permissive`) it builds
/// placeholder instances of nested types.
struct ProbeDecoder: Decoder {
  let recorder: ProbeRecorder?
  let permissive: Bool
  var single: SingleValueProbe?
  var codingPath: [any CodingKey] = []
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  init(recorder: ProbeRecorder?, permissive: Bool, single: SingleValueProbe? = nil) {
    self.recorder = recorder
    self.permissive = permissive
    self.single = single
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    if let single, single.kind == nil { single.kind = .document }
    return KeyedDecodingContainer(ProbeKeyedContainer<Key>(recorder: recorder, codingPath: codingPath))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    if let single, single.kind == nil { single.kind = .document }
    return ProbeUnkeyedContainer(codingPath: codingPath)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    guard recorder == nil else {
      throw CofferError(
        .invalidSchema,
        "A Storable type must decode itself from a keyed container (one key per field), not a single value.")
    }
    return ProbeSingleValueContainer(codingPath: codingPath, single: single)
  }
}

/// Placeholder values for scalar requests.
enum Placeholder {
  static func value<T: Decodable>(_ type: T.Type, codingPath: [any CodingKey]) throws -> T {
    if let value = scalar(type) { return value }
    if let value = ScalarTypes.placeholder(type) { return value }
    if let value = try? T(from: ProbeDecoder(recorder: nil, permissive: true)) { return value }
    if let cases = type as? any CaseIterable.Type, let first = firstCase(cases) as? T { return first }
    throw DecodingError.dataCorrupted(
      .init(codingPath: codingPath, debugDescription: "No placeholder value of \(T.self) could be made."))
  }

  static func scalar<T>(_ type: T.Type) -> T? {
    let value: Any? =
      switch type {
      case is Bool.Type: false
      case is String.Type: ""
      case is Double.Type: 0.0 as Double
      case is Float.Type: 0.0 as Float
      case is Int.Type: 0 as Int
      case is Int8.Type: 0 as Int8
      case is Int16.Type: 0 as Int16
      case is Int32.Type: 0 as Int32
      case is Int64.Type: 0 as Int64
      case is UInt.Type: 0 as UInt
      case is UInt8.Type: 0 as UInt8
      case is UInt16.Type: 0 as UInt16
      case is UInt32.Type: 0 as UInt32
      case is UInt64.Type: 0 as UInt64
      default: nil
      }
    return value as? T
  }

  private static func firstCase<C: CaseIterable>(_ type: C.Type) -> Any? { type.allCases.first }
}

struct ProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let recorder: ProbeRecorder?
  var codingPath: [any CodingKey]
  var allKeys: [Key] { [] }

  func contains(_ key: Key) -> Bool { recorder != nil }

  func decodeNil(forKey key: Key) throws -> Bool {
    guard let recorder else { return true }
    // A custom init(from:) that checks for nil first is declaring an optional field; its
    // kind is recorded by the decode call that follows.
    recorder.pendingOptional.insert(key.stringValue)
    return false
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    guard let recorder else { return try Placeholder.value(type, codingPath: codingPath + [key]) }
    let optional = recorder.pendingOptional.remove(key.stringValue) != nil
    if let value = Placeholder.scalar(type) {
      recorder.record(key.stringValue, ScalarTypes.kind(of: type) ?? .document, optional: optional)
      return value
    }
    let (kind, instance) = try recorder.probe(type, field: key.stringValue)
    recorder.record(key.stringValue, kind, optional: optional)
    if let instance { return instance }
    return try Placeholder.value(type, codingPath: codingPath + [key])
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    guard let recorder else { return nil }
    let (kind, _) = try recorder.probe(type, field: key.stringValue)
    recorder.record(key.stringValue, kind, optional: true)
    return nil
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try unsupportedNesting(key)
    return KeyedDecodingContainer(
      ProbeKeyedContainer<NestedKey>(recorder: nil, codingPath: codingPath + [key]))
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try unsupportedNesting(key)
    return ProbeUnkeyedContainer(codingPath: codingPath + [key])
  }

  func superDecoder() throws -> any Decoder { ProbeDecoder(recorder: nil, permissive: true) }
  func superDecoder(forKey key: Key) throws -> any Decoder { ProbeDecoder(recorder: nil, permissive: true) }

  private func unsupportedNesting(_ key: Key) throws {
    guard let recorder else { return }
    throw CofferError(
      .invalidSchema,
      "Field '\(key.stringValue)' of '\(recorder.entity)' is decoded through a nested container. "
        + "Decode it as a Codable value of its own type so that it is stored as a document.",
      entity: recorder.entity, field: key.stringValue)
  }
}

struct ProbeUnkeyedContainer: UnkeyedDecodingContainer {
  var codingPath: [any CodingKey]
  var count: Int? { 0 }
  var isAtEnd: Bool { true }
  var currentIndex: Int { 0 }

  mutating func decodeNil() throws -> Bool { true }
  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try Placeholder.value(type, codingPath: codingPath)
  }
  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    KeyedDecodingContainer(ProbeKeyedContainer<NestedKey>(recorder: nil, codingPath: codingPath))
  }
  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { self }
  mutating func superDecoder() throws -> any Decoder { ProbeDecoder(recorder: nil, permissive: true) }
}

struct ProbeSingleValueContainer: SingleValueDecodingContainer {
  var codingPath: [any CodingKey]
  let single: SingleValueProbe?

  func decodeNil() -> Bool { false }
  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    if let single, single.kind == nil {
      single.kind = ScalarTypes.kind(of: type) ?? .document
    }
    if let value = Placeholder.scalar(type) { return value }
    return try Placeholder.value(type, codingPath: codingPath)
  }
}

extension FieldKind {
  /// The kind a `Decodable` type is stored as, found by decoding it from a probe the way the
  /// `Codable` row codec does: what `@Storable`'s generated schema asks of a property whose type
  /// is neither a scalar nor a raw-value enum.
  ///
  /// - Throws: ``CofferError/Code/invalidSchema`` (naming `entity` and `field`) for a type that
  ///   rejects every placeholder value.
  @_spi(Backend) public static func probing<T: Decodable>(_ type: T.Type, field: String, in entity: String)
    throws -> FieldKind
  {
    try ProbeRecorder(entity: entity).probe(type, field: field).0
  }
}
