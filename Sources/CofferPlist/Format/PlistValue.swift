import Foundation

/// A property-list value, as read from or written to a store file.
///
/// Dictionaries keep their keys in order so files are written deterministically.
enum PlistValue: Equatable, Sendable {
  indirect case dict([(key: String, value: PlistValue)])
  indirect case array([PlistValue])
  case string(String)
  case integer(Int64)
  case real(Double)
  case bool(Bool)
  case data(Data)
  case date(Date)

  static func == (lhs: PlistValue, rhs: PlistValue) -> Bool {
    switch (lhs, rhs) {
    case (.dict(let a), .dict(let b)):
      a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    case (.array(let a), .array(let b)): a == b
    case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
    case (.integer(let a), .integer(let b)): a == b
    case (.real(let a), .real(let b)): a == b || (a.isNaN && b.isNaN)
    case (.bool(let a), .bool(let b)): a == b
    case (.data(let a), .data(let b)): a == b
    case (.date(let a), .date(let b)): a == b
    default: false
    }
  }

  /// The value for a key of a dictionary, or `nil`.
  subscript(key: String) -> PlistValue? {
    guard case .dict(let entries) = self else { return nil }
    return entries.first { $0.key == key }?.value
  }

  /// A short name of the value's type, for messages.
  var typeName: String {
    switch self {
    case .dict: "dictionary"
    case .array: "array"
    case .string: "string"
    case .integer: "integer"
    case .real: "real"
    case .bool: "boolean"
    case .data: "data"
    case .date: "date"
    }
  }
}

/// Why a file could not be read as a property list: where, and what was found.
struct PlistSyntaxError: Error, CustomStringConvertible {
  var offset: Int
  var reason: String
  var description: String { "at byte \(offset): \(reason)" }
}
