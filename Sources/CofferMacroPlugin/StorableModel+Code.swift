import SwiftSyntax

/// The Swift source `@Storable` generates from a ``StorableModel``.
extension StorableModel {
  /// The members of the conformance extension.
  func extensionMembers() -> [String] {
    var members: [String] = []
    if !declaredStatics.contains("entityName") {
      if let entityOption {
        members.append("public static var entityName: String { \(StoredProperty.literal(entityOption)) }")
      } else if !isGeneric {
        members.append("public static var entityName: String { \(StoredProperty.literal(typeName)) }")
      }
    }
    if let id = idProperty, id.storedName != "id", !declaredStatics.contains("idField") {
      members.append("public static var idField: String { \(id.storedNameLiteral) }")
    }
    let indexes = stored.compactMap { property -> String? in
      if property.isUnique { return ".unique(\(property.storedNameLiteral))" }
      if property.isTextIndexed { return ".text(on: \(property.storedNameLiteral))" }
      if property.isIndexed { return ".on(\(property.storedNameLiteral))" }
      return nil
    }
    if !indexes.isEmpty && !declaredStatics.contains("indexes") {
      members.append("public static var indexes: [Coffer.Index] { [\(indexes.joined(separator: ", "))] }")
    }
    let references = stored.compactMap { property -> String? in
      guard let reference = property.reference else { return nil }
      return "Coffer.EntityReference.to(\(reference.target), by: \(property.storedNameLiteral), "
        + "onDelete: \(reference.onDelete ?? ".deny"))"
    }
    if !references.isEmpty && !declaredStatics.contains("references") {
      members.append(
        "public static var references: [Coffer.EntityReference] { [\(references.joined(separator: ", "))] }")
    }
    let defaults = stored.filter { $0.initializer.map(Self.isConstant) ?? false }
    if !defaults.isEmpty && !declaredStatics.contains("fieldDefaults") {
      let lines = defaults.map { property in
        "  defaults[\(property.storedNameLiteral)] = CofferMacroSupport.StoredField.defaultValue(\\Self.\(escaped(property.name)), "
          + "\(property.initializer?.trimmedDescription ?? "nil"), in: Self.entityName)"
      }
      members.append(
        """
        public static var fieldDefaults: [String: Coffer.Value] {
          var defaults: [String: Coffer.Value] = [:]
        \(lines.joined(separator: "\n"))
          return defaults
        }
        """)
    }
    if idFromOption && idName != "id" && !hasIDProperty, let type = idProperty?.type {
      members.append("public var id: \(type.trimmedDescription) { \(escaped(idName)) }")
    }
    members.append(storedFieldsFunction())
    members.append(storedRowFunction())
    members.append(initFunction())
    members.append(keyPathFunction())
    return members
  }

  /// The `CodingKeys` enum, when stored names differ from property names or some are transient.
  func codingKeys() -> String? {
    guard !hasCodingKeys, properties.contains(where: { $0.isTransient || $0.storedName != $0.name }) else {
      return nil
    }
    let cases = stored.map { property in
      property.storedName == property.name
        ? "  case \(escaped(property.name))"
        : "  case \(escaped(property.name)) = \(property.storedNameLiteral)"
    }
    return "enum CodingKeys: String, CodingKey {\n\(cases.joined(separator: "\n"))\n}"
  }

  private func storedFieldsFunction() -> String {
    let fields = stored.map { property in
      "    CofferMacroSupport.StoredField.field(\(property.storedNameLiteral), \\Self.\(escaped(property.name)), in: entity),"
    }
    return """
      public static func _storedFields() throws -> [Coffer.Field]? {
        let entity = Self.entityName
        return try [
      \(fields.joined(separator: "\n"))
        ]
      }
      """
  }

  private func storedRowFunction() -> String {
    let values = stored.map { property in
      "    CofferMacroSupport.StoredField.value(self.\(escaped(property.name)), \(property.storedNameLiteral), in: entity),"
    }
    return """
      public func _storedRow() throws -> Coffer.Row {
        let entity = Self.entityName
        return Coffer.Row(try [
      \(values.joined(separator: "\n"))
        ])
      }
      """
  }

  private func initFunction() -> String {
    let idPosition = stored.firstIndex { $0.name == idName } ?? 0
    let reader =
      "  let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: \(idPosition))"
    let types = stored.compactMap { $0.type?.trimmedDescription }
    let lines: [String]
    if types.count == stored.count {
      // Every value is read into a local before any property is set: an initializer that can
      // throw after some properties are set builds the value aside and copies it out (a retain
      // and a release for each reference it holds), one that sets them all at the end does not.
      let reads = zip(stored.indices, types).map { position, type in
        "  let value\(position): \(type) = try reader.read(\(position), \(stored[position].storedNameLiteral))"
      }
      let sets = stored.indices.map { "  self.\(escaped(stored[$0].name)) = value\($0)" }
      lines = [reader] + reads + sets
    } else {
      // A property without a written type gets its read's type from the assignment.
      lines =
        [reader]
        + stored.enumerated().map { position, property in
          "  self.\(escaped(property.name)) = try reader.read(\(position), \(property.storedNameLiteral))"
        }
    }
    return """
      public init(_storedRow row: Coffer.StoredRow) throws {
      \(lines.joined(separator: "\n"))
      }
      """
  }

  private func keyPathFunction() -> String {
    var cases = stored.map { "  case \\Self.\(escaped($0.name)): \($0.storedNameLiteral)" }
    if idFromOption && idName != "id" && !hasIDProperty, let id = idProperty {
      cases.append("  case \\Self.id: \(id.storedNameLiteral)")
    }
    return """
      public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
        switch keyPath {
      \(cases.joined(separator: "\n"))
        default: nil
        }
      }
      """
  }

  private func escaped(_ name: String) -> String {
    Self.keywords.contains(name) ? "`\(name)`" : name
  }

  private static let keywords: Set<String> = [
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init",
    "inout",
    "internal", "let", "open", "operator", "private", "protocol", "public", "rethrows", "static", "struct",
    "subscript", "typealias", "var", "break", "case", "continue", "default", "defer", "do", "else",
    "fallthrough", "for", "guard", "if", "in", "repeat", "return", "switch", "where", "while", "as", "catch",
    "false", "is", "nil", "self", "Self", "super", "throw", "throws", "true", "try", "Any", "Type",
  ]

  /// Whether an initial value is a constant that can be a field default: a literal, a negated
  /// number, an empty collection, or a member such as `.red` (not `nil`, calls or `now`).
  static func isConstant(_ expression: ExprSyntax) -> Bool {
    if expression.is(IntegerLiteralExprSyntax.self) || expression.is(FloatLiteralExprSyntax.self)
      || expression.is(BooleanLiteralExprSyntax.self)
    {
      return true
    }
    if let string = expression.as(StringLiteralExprSyntax.self) { return string.plainText != nil }
    if let prefix = expression.as(PrefixOperatorExprSyntax.self) {
      return prefix.operator.text == "-"
        && (prefix.expression.is(IntegerLiteralExprSyntax.self)
          || prefix.expression.is(FloatLiteralExprSyntax.self))
    }
    if let array = expression.as(ArrayExprSyntax.self) { return array.elements.isEmpty }
    if let dictionary = expression.as(DictionaryExprSyntax.self) {
      if case .colon = dictionary.content { return true }
      return false
    }
    if let member = expression.as(MemberAccessExprSyntax.self) {
      guard !["now", "init", "random"].contains(member.declName.baseName.text) else { return false }
      guard let base = member.base else { return true }
      return base.is(DeclReferenceExprSyntax.self)
    }
    return false
  }
}
