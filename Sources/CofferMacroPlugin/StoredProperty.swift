import SwiftDiagnostics
import SwiftSyntax

/// One instance property of a `@Storable` struct, as written.
struct StoredProperty {
  /// The property's name.
  var name: String
  /// The name it is stored under (`@StoredName`, or the property's name).
  var storedName: String
  /// The declared type, when written.
  var type: TypeSyntax?
  /// The initial value, when written.
  var initializer: ExprSyntax?
  var isTransient: Bool
  /// Whether the property has a value without being stored (an initial value, or `nil` for an
  /// optional `var`).
  var canBeLeftOut: Bool
  var isIndexed: Bool
  var isUnique: Bool
  /// Whether `@Indexed(.text)` asks for a text index.
  var isTextIndexed = false
  /// `@Reference`'s arguments as written: the referenced type (`ChatThread.self`) and the
  /// delete rule (`.cascade`), or `nil` when the property is no reference.
  var reference: (target: String, onDelete: String?)? = nil
  /// The declaration, for diagnostics.
  var node: Syntax

  /// The property's stored name as a Swift string literal.
  var storedNameLiteral: String { StoredProperty.literal(storedName) }

  /// Text as a Swift string literal that reads back as exactly that text.
  static func literal(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      case "\0": result += "\\0"
      default:
        if scalar.value < 0x20 || scalar.value == 0x7F {
          result += "\\u{\(String(scalar.value, radix: 16))}"
        } else {
          result.unicodeScalars.append(scalar)
        }
      }
    }
    return result + "\""
  }
}
