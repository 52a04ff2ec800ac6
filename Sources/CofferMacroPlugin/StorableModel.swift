import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder

/// What `@Storable` learns from the struct it is attached to: options, stored properties and
/// the members the user wrote, after reporting whatever cannot be stored.
struct StorableModel {
  var typeName: String
  var isGeneric: Bool
  /// The entity name from `@Storable(entity:)`, if given.
  var entityOption: String?
  /// The name of the id property.
  var idName: String
  /// Whether `@Storable(id:)` named the id.
  var idFromOption: Bool
  var properties: [StoredProperty]
  /// Names of static members the user declared (entityName, idField, indexes, fieldDefaults).
  var declaredStatics: Set<String>
  var hasIDProperty: Bool
  var hasCodingKeys: Bool

  var stored: [StoredProperty] { properties.filter { !$0.isTransient } }
  var idProperty: StoredProperty? { stored.first { $0.name == idName } }

  /// Reads the struct, or reports why `@Storable` cannot apply and returns `nil`.
  static func read(
    attribute: AttributeSyntax, declaration: some DeclGroupSyntax, sink: DiagnosticSink
  ) -> StorableModel? {
    guard let structDecl = declaration.as(StructDeclSyntax.self) else {
      reportNotAStruct(declaration, sink: sink)
      return nil
    }
    var entityOption: String?
    var idOption: String?
    for argument in attribute.arguments?.as(LabeledExprListSyntax.self) ?? [] {
      let label = argument.label?.text ?? ""
      guard let text = argument.expression.as(StringLiteralExprSyntax.self)?.plainText,
        !text.isEmpty
      else {
        sink.error(
          .badArgument("@Storable(\(label):) takes a non-empty string literal."),
          at: Syntax(argument.expression))
        continue
      }
      if label == "entity" { entityOption = text } else if label == "id" { idOption = text }
    }
    let members = structDecl.memberBlock.members
    var codingKeys: [String: String]?
    var hasCodingKeys = false
    for member in members {
      if let enumDecl = member.decl.as(EnumDeclSyntax.self), enumDecl.name.text == "CodingKeys" {
        hasCodingKeys = true
        codingKeys = codingKeyNames(enumDecl)
        if codingKeys == nil { sink.error(.ownCodingKeys, at: Syntax(enumDecl.name)) }
      }
      if let alias = member.decl.as(TypeAliasDeclSyntax.self), alias.name.text == "CodingKeys" {
        hasCodingKeys = true
        sink.error(.ownCodingKeys, at: Syntax(alias.name))
      }
    }
    let properties = PropertyReader(context: sink, codingKeys: codingKeys).properties(of: members)
    var statics: Set<String> = []
    for member in members {
      if let variable = member.decl.as(VariableDeclSyntax.self),
        variable.modifiers.contains(where: { $0.name.text == "static" })
      {
        for binding in variable.bindings {
          if let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text {
            statics.insert(name)
          }
        }
      }
    }
    let model = StorableModel(
      typeName: structDecl.name.text, isGeneric: structDecl.genericParameterClause != nil,
      entityOption: entityOption, idName: idOption ?? "id", idFromOption: idOption != nil,
      properties: properties, declaredStatics: statics,
      hasIDProperty: properties.contains { $0.name == "id" }, hasCodingKeys: hasCodingKeys)
    model.check(structDecl, sink: sink)
    return model
  }

  private func check(_ structDecl: StructDeclSyntax, sink: DiagnosticSink) {
    if let declared = properties.first(where: { $0.name == idName }) {
      if declared.isTransient {
        sink.error(.idNotStored(name: idName), at: declared.node)
      } else if idName != "id" && !hasIDProperty && declared.type == nil {
        sink.error(.idNeedsType(name: idName), at: declared.node)
      }
    } else {
      var block = structDecl.memberBlock
      let indentation = block.members.first?.leadingTrivia ?? .newline
      let insertion = DeclSyntax("var id: UUID").with(\.leadingTrivia, indentation)
      block.members.insert(MemberBlockItemSyntax(decl: insertion), at: block.members.startIndex)
      sink.error(
        .noID(name: idName, type: structDecl.name.text), at: Syntax(structDecl.name),
        fixIt: idFromOption ? nil : StorableFixIt(message: "Add 'var id: UUID'"),
        changes: [.replace(oldNode: Syntax(structDecl.memberBlock), newNode: Syntax(block))])
    }
    if idFromOption && idName != "id" && hasIDProperty {
      sink.error(.idConflict(option: idName), at: Syntax(structDecl.name))
    }
    if declaredStatics.contains("indexes") && stored.contains(where: { $0.isIndexed || $0.isUnique }) {
      sink.error(.indexesTwice, at: Syntax(structDecl.name))
    }
    if declaredStatics.contains("references") && stored.contains(where: { $0.reference != nil }) {
      sink.error(.referencesTwice, at: Syntax(structDecl.name))
    }
    var seen: Set<String> = []
    for property in stored where !seen.insert(property.storedName).inserted {
      sink.error(.duplicateStoredName(property.storedName), at: property.node)
    }
  }

  private static func reportNotAStruct(_ declaration: some DeclGroupSyntax, sink: DiagnosticSink) {
    if let classDecl = declaration.as(ClassDeclSyntax.self) {
      let structKeyword = TokenSyntax.keyword(.struct).with(
        \.trailingTrivia, classDecl.classKeyword.trailingTrivia
      )
      .with(\.leadingTrivia, classDecl.classKeyword.leadingTrivia)
      sink.error(
        .notAStruct(kind: "class"), at: Syntax(classDecl.classKeyword),
        fixIt: StorableFixIt(message: "Make it a struct"),
        changes: [.replace(oldNode: Syntax(classDecl.classKeyword), newNode: Syntax(structKeyword))])
    } else if let actorDecl = declaration.as(ActorDeclSyntax.self) {
      sink.error(.notAStruct(kind: "actor"), at: Syntax(actorDecl.actorKeyword))
    } else if let enumDecl = declaration.as(EnumDeclSyntax.self) {
      sink.error(.notAStruct(kind: "enum"), at: Syntax(enumDecl.enumKeyword))
    } else {
      sink.error(.notAStruct(kind: "declaration"), at: Syntax(declaration))
    }
  }
}
