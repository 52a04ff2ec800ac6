import CofferMacroPlugin
import Foundation
import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import Testing

/// `CofferConformance` builds without swift-syntax, so its models carry, written out, the code
/// `@Storable` would generate for them: a `Storable, KeyPathStorable` extension each, and the
/// `CodingKeys` the macro adds as a member. This expands `@Storable` on each of those models, as
/// `Conformance/` declares them, and compares the result token for token (comments and layout
/// aside) with the struct and extension there, so that a change to the macro or to a model that
/// the written-out code does not follow fails here.
///
/// A model's `@Storable` declaration is its struct with `@Storable` added, its field markers
/// written as comments (`/* @Unique */ var email`) turned back into attributes, and its
/// `CodingKeys` enum left out (the macro adds it).
@Suite struct ConformanceModelExpansion {
  @Test func theConformanceModelsCarryWhatStorableGenerates() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Conformance")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
      .filter { $0.hasSuffix(".swift") }.sorted()
    var structs: [String: StructDeclSyntax] = [:]
    var extensions: [(file: String, decl: ExtensionDeclSyntax)] = []
    for file in files {
      let source = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
      for item in Parser.parse(source: source).statements {
        if let structDecl = item.item.as(StructDeclSyntax.self) {
          structs[structDecl.name.text] = structDecl
        } else if let extensionDecl = item.item.as(ExtensionDeclSyntax.self),
          let inherited = extensionDecl.inheritanceClause?.inheritedTypes,
          inherited.contains(where: { $0.type.trimmedDescription.hasSuffix("Storable") })
        {
          extensions.append((file, extensionDecl))
        }
      }
    }
    #expect(!extensions.isEmpty, "no written-out @Storable code in \(folder.path)")

    for (file, written) in extensions {
      let name = written.extendedType.trimmedDescription
      guard let model = structs[name] else {
        Issue.record("Conformance/\(file) extends \(name), which no file in Conformance/ declares")
        continue
      }
      let (expansion, diagnostics) = Self.expandStorable(on: model)
      #expect(diagnostics.isEmpty, "@Storable reports on \(name): \(diagnostics)")
      let expected = Self.tokens(of: expansion)
      let actual = Self.tokens(of: Syntax(model)) + Self.tokens(of: Syntax(written))
      guard expected != actual else { continue }
      let index = zip(expected, actual).prefix { $0 == $1 }.count
      Issue.record(
        """
        \(name) (extended in Conformance/\(file)) is not what @Storable generates for it: after \
        `\(expected[max(0, index - 6)..<index].joined(separator: " "))` the macro writes \
        `\(expected.dropFirst(index).prefix(6).joined(separator: " "))`, Conformance/ has \
        `\(actual.dropFirst(index).prefix(6).joined(separator: " "))`. Replace both with the expansion, \
        keeping the comments above the extension:

        \(expansion.description.trimmingCharacters(in: .whitespacesAndNewlines))
        """)
    }
  }

  /// The struct and extension `@Storable` makes of `model`, and the diagnostics it reports.
  private static func expandStorable(on model: StructDeclSyntax) -> (Syntax, [String]) {
    let members = model.memberBlock.members.filter {
      $0.decl.as(EnumDeclSyntax.self)?.name.text != "CodingKeys"
    }
    let declaration = model.with(\.memberBlock.members, members)
    let source =
      "@Storable\n"
      + declaration.trimmedDescription.replacing(#/\/\*\s*(@[^*]*?)\s*\*\//#) { String($0.output.1) }
    let context = BasicMacroExpansionContext()
    let expansion = Parser.parse(source: source).expand(
      macroSpecs: storableMacros,
      contextGenerator: {
        BasicMacroExpansionContext(sharingWith: context, lexicalContext: $0.allMacroLexicalContexts())
      },
      indentationWidth: .spaces(2))
    return (expansion, context.diagnostics.map(\.message))
  }

  /// The text of each token of `syntax`, without a comma that ends a list (the formatter adds
  /// or drops those by layout).
  private static func tokens(of syntax: Syntax) -> [String] {
    let texts = syntax.tokens(viewMode: .sourceAccurate).map(\.text).filter { !$0.isEmpty }
    return texts.indices.compactMap { index in
      let next = index + 1 < texts.count ? texts[index + 1] : ""
      return texts[index] == "," && (next == "]" || next == ")") ? nil : texts[index]
    }
  }
}
