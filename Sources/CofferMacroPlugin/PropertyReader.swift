import SwiftDiagnostics
import SwiftSyntax

/// Reads the instance properties of a struct's members, reporting what cannot be stored.
struct PropertyReader {
  let context: DiagnosticSink
  /// The stored names a hand-written `CodingKeys` gives, by property name, if there is one.
  var codingKeys: [String: String]? = nil
  private static let markers: Set<String> = ["Indexed", "Unique", "StoredName", "Transient", "Reference"]

  func properties(of members: MemberBlockItemListSyntax) -> [StoredProperty] {
    var result: [StoredProperty] = []
    for member in members {
      guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
      if variable.modifiers.contains(where: { ["static", "class"].contains($0.name.text) }) { continue }
      let markers = self.markers(of: variable)
      let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
      let isLazy = variable.modifiers.contains { $0.name.text == "lazy" }
      let bindings = Array(variable.bindings)
      for (index, binding) in bindings.enumerated() {
        guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else { continue }
        let name = identifier.identifier.identifier?.name ?? identifier.identifier.text
        if isComputed(binding) {
          for (marker, attribute) in markers.attributes where marker != "Transient" {
            var fixed = variable
            fixed.attributes = variable.attributes.filter { $0.as(AttributeSyntax.self) != attribute }
            fixed.leadingTrivia = variable.leadingTrivia
            context.error(
              .computedMarked(property: name, marker: marker), at: Syntax(attribute),
              fixIt: StorableFixIt(message: "Remove @\(marker)"),
              changes: [.replace(oldNode: Syntax(variable), newNode: Syntax(fixed))])
          }
          continue
        }
        let type =
          binding.typeAnnotation?.type ?? bindings[index...].lazy.compactMap(\.typeAnnotation).first?.type
        let canBeLeftOut = binding.initializer != nil || (!isLet && (type.map(isOptional) ?? false))
        var property = StoredProperty(
          name: name, storedName: markers.storedName ?? name, type: type,
          initializer: binding.initializer?.value, isTransient: markers.isTransient,
          canBeLeftOut: canBeLeftOut,
          isIndexed: markers.attributes.contains { $0.0 == "Indexed" },
          isUnique: markers.attributes.contains { $0.0 == "Unique" }, node: Syntax(binding))
        property.reference = markers.reference
        property.isTextIndexed = markers.isTextIndexed
        if let codingKeys {
          if !markers.attributes.filter({ ["StoredName", "Transient"].contains($0.0) }).isEmpty {
            context.error(.markersWithCodingKeys(property: name), at: Syntax(binding))
          }
          if let stored = codingKeys[name] {
            property.storedName = stored
          } else {
            property.isTransient = true
            if !canBeLeftOut { context.error(.notInCodingKeys(property: name), at: Syntax(binding)) }
          }
        }
        if property.isTransient {
          if codingKeys == nil && !canBeLeftOut {
            context.error(.transientNeedsDefault(property: name), at: Syntax(binding))
          }
        } else if isLazy {
          context.error(.lazyStored(property: name), at: Syntax(variable))
          property.isTransient = true
        } else if isLet && property.initializer != nil {
          context.error(.letWithValue(property: name), at: Syntax(variable))
          property.isTransient = true
        } else if let type, let reason = unsupported(type) {
          context.error(
            .unsupportedType(property: name, type: type.trimmedDescription, reason: reason), at: Syntax(type))
        }
        result.append(property)
      }
    }
    return result
  }

  private struct Markers {
    var attributes: [(String, AttributeSyntax)] = []
    var storedName: String?
    var reference: (target: String, onDelete: String?)?
    var isTransient: Bool { attributes.contains { $0.0 == "Transient" } }
    /// Whether an `@Indexed` names the text kind: `@Indexed(.text)`.
    var isTextIndexed: Bool {
      attributes.contains { name, attribute in
        name == "Indexed"
          && attribute.arguments?.as(LabeledExprListSyntax.self)?.first?.expression.trimmedDescription
            .hasSuffix(".text") == true
      }
    }
  }

  private func markers(of variable: VariableDeclSyntax) -> Markers {
    var markers = Markers()
    for element in variable.attributes {
      guard let attribute = element.as(AttributeSyntax.self) else { continue }
      let name = attribute.attributeName.trimmedDescription.split(separator: ".").last.map(String.init) ?? ""
      guard Self.markers.contains(name) else { continue }
      markers.attributes.append((name, attribute))
      if name == "Reference" {
        let arguments = Array(attribute.arguments?.as(LabeledExprListSyntax.self) ?? [])
        if let target = arguments.first, target.label == nil {
          let rule = arguments.dropFirst().first { $0.label?.text == "onDelete" }
          markers.reference = (target.expression.trimmedDescription, rule?.expression.trimmedDescription)
        } else {
          context.error(
            .badArgument(
              "@Reference names the referenced type: @Reference(ChatThread.self, onDelete: .cascade)."),
            at: Syntax(attribute))
        }
      }
      if name == "StoredName" {
        let literal = attribute.arguments?.as(LabeledExprListSyntax.self)?.first?.expression
          .as(StringLiteralExprSyntax.self)
        if let literal, let text = literal.plainText, !text.isEmpty {
          markers.storedName = text
        } else {
          context.error(
            .badArgument("@StoredName takes a non-empty string literal: @StoredName(\"name\")."),
            at: Syntax(attribute))
        }
      }
    }
    return markers
  }

  private func isComputed(_ binding: PatternBindingSyntax) -> Bool {
    guard let block = binding.accessorBlock else { return false }
    switch block.accessors {
    case .getter: return true
    case .accessors(let list):
      return list.contains { !["willSet", "didSet"].contains($0.accessorSpecifier.text) }
    }
  }

  private func isOptional(_ type: TypeSyntax) -> Bool {
    if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
    if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.text == "Optional" }
    return false
  }

  /// Why a type cannot be stored, or `nil` when it may be (the compiler checks the rest).
  private func unsupported(_ type: TypeSyntax) -> String? {
    if let optional = type.as(OptionalTypeSyntax.self) { return unsupported(optional.wrappedType) }
    if type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
      return "implicitly unwrapped optionals are not stored; use a plain optional"
    }
    if let attributed = type.as(AttributedTypeSyntax.self) { return unsupported(attributed.baseType) }
    if type.is(FunctionTypeSyntax.self) { return "functions are not data; store what they act on instead" }
    if type.is(MetatypeTypeSyntax.self) { return "types are not data; store a name or an enum instead" }
    if let tuple = type.as(TupleTypeSyntax.self) {
      if tuple.elements.count == 1, let only = tuple.elements.first { return unsupported(only.type) }
      return "tuples are not Codable; use a struct instead"
    }
    if let some = type.as(SomeOrAnyTypeSyntax.self) {
      return "'\(some.someOrAnySpecifier.text)' types have no fixed stored form; use a concrete type"
    }
    if let array = type.as(ArrayTypeSyntax.self) { return unsupported(array.element) }
    if let dictionary = type.as(DictionaryTypeSyntax.self) {
      return unsupported(dictionary.key) ?? unsupported(dictionary.value)
    }
    if let identifier = type.as(IdentifierTypeSyntax.self),
      ["Any", "AnyObject", "AnyHashable", "AnyClass"].contains(identifier.name.text)
    {
      return "'\(identifier.name.text)' has no fixed stored form; use a concrete type"
    }
    return nil
  }
}
