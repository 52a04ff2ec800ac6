import SwiftSyntax

/// A hand-written `CodingKeys` enum: `@Storable` takes the stored names from it, as the
/// synthesized `Codable` conformance does, and leaves out the properties it does not list.
extension StorableModel {
  /// The stored name of each case (its string raw value, or its name), or `nil` when the enum
  /// is not made of plain cases with string-literal raw values.
  static func codingKeyNames(_ enumDecl: EnumDeclSyntax) -> [String: String]? {
    let inherited = enumDecl.inheritanceClause?.inheritedTypes.map(\.type.trimmedDescription) ?? []
    let hasStringRawValues = inherited.contains("String") || inherited.contains("Swift.String")
    var names: [String: String] = [:]
    for member in enumDecl.memberBlock.members {
      guard let caseDecl = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
      for element in caseDecl.elements {
        guard element.parameterClause == nil else { return nil }
        let name = element.name.identifier?.name ?? element.name.text
        if let rawValue = element.rawValue {
          guard hasStringRawValues, let text = rawValue.value.as(StringLiteralExprSyntax.self)?.plainText
          else {
            return nil
          }
          names[name] = text
        } else {
          names[name] = name
        }
      }
    }
    return names
  }
}
