import Foundation

/// The Swift types the row codec stores as a scalar ``Value`` directly, with the field kind
/// each maps to. Any other `Codable` type is stored as its single scalar value when it encodes
/// as one (enums with raw values, single-value wrappers) and as a document otherwise.
enum ScalarTypes {
  /// The field kind a well-known Swift type is stored as, or `nil` for other types.
  static func kind(of type: Any.Type) -> FieldKind? {
    switch type {
    case is Bool.Type: .bool
    case is String.Type: .string
    case is Double.Type, is Float.Type: .double
    case is Int.Type, is Int8.Type, is Int16.Type, is Int32.Type, is Int64.Type: .int
    case is UInt.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type, is UInt64.Type: .int
    case is Date.Type: .date
    case is UUID.Type: .uuid
    case is Data.Type: .bytes
    case is URL.Type: .string
    default: nil
    }
  }

  /// A placeholder instance of a well-known type, used while probing a type's schema.
  static func placeholder<T>(_ type: T.Type) -> T? {
    let value: Any? =
      switch type {
      case is Date.Type: Date(timeIntervalSince1970: 0)
      case is UUID.Type: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
      case is Data.Type: Data()
      case is URL.Type: URL(string: "about:blank")
      case is Decimal.Type: Decimal(0)
      default: nil
      }
    return value as? T
  }
}
