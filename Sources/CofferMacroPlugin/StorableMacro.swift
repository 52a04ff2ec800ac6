import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Storable`: conforms a struct to `Storable` and `KeyPathStorable` with a schema, a row codec
/// and a key-path map written at compile time.
///
/// The extension role reports every diagnostic; the member role (which adds `CodingKeys` when
/// stored names differ from property names or some properties are transient) stays silent so
/// that nothing is reported twice.
public struct StorableMacro: ExtensionMacro, MemberMacro {
  /// The conformance extension, or nothing (after diagnostics) when the type cannot be stored.
  public static func expansion(
    of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
    providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
    in context: some MacroExpansionContext
  ) throws -> [ExtensionDeclSyntax] {
    let sink = DiagnosticSink(context)
    guard let model = StorableModel.read(attribute: node, declaration: declaration, sink: sink),
      !sink.hasErrors
    else { return [] }
    let conformances = protocols.map(\.trimmedDescription)
    let inheritance = conformances.isEmpty ? "" : ": " + conformances.joined(separator: ", ")
    let body = model.extensionMembers().joined(separator: "\n\n")
    let source: DeclSyntax = "extension \(raw: type.trimmedDescription)\(raw: inheritance) {\n\(raw: body)\n}"
    guard let extensionDecl = source.as(ExtensionDeclSyntax.self) else { return [] }
    return [extensionDecl]
  }

  /// `CodingKeys`, when the stored names or the transient properties need them.
  public static func expansion(
    of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
    conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
  ) throws -> [DeclSyntax] {
    let sink = DiagnosticSink(silent: ())
    guard let model = StorableModel.read(attribute: node, declaration: declaration, sink: sink),
      !sink.hasErrors, let codingKeys = model.codingKeys()
    else { return [] }
    return ["\(raw: codingKeys)"]
  }
}
