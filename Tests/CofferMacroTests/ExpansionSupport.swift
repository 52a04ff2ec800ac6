import CofferMacroPlugin
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// The macros as the compiler sees them, with the conformances `@Storable`'s extension adds.
let storableMacros: [String: MacroSpec] = [
  "Storable": MacroSpec(
    type: StorableMacro.self,
    conformances: ["Storable", "KeyPathStorable"].map {
      TypeSyntax(IdentifierTypeSyntax(name: .identifier($0)))
    }),
  "Indexed": MacroSpec(type: FieldMarkerMacro.self),
  "Unique": MacroSpec(type: FieldMarkerMacro.self),
  "StoredName": MacroSpec(type: FieldMarkerMacro.self),
  "Transient": MacroSpec(type: FieldMarkerMacro.self),
  "Reference": MacroSpec(type: FieldMarkerMacro.self),
]

/// Expands `source` with Coffer's macros and records a Swift Testing issue for every difference
/// from `expanded` and from the expected diagnostics.
func assertExpansion(
  _ source: String, expandedSource expanded: String, diagnostics: [DiagnosticSpec] = [],
  applyFixIts: [String]? = nil, fixedSource: String? = nil,
  fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line,
  column: UInt = #column
) {
  assertMacroExpansion(
    source, expandedSource: expanded, diagnostics: diagnostics, macroSpecs: storableMacros,
    applyFixIts: applyFixIts, fixedSource: fixedSource, indentationWidth: .spaces(2),
    failureHandler: { failure in
      Issue.record(
        Comment(rawValue: failure.message),
        sourceLocation: Testing.SourceLocation(
          fileID: failure.location.fileID, filePath: failure.location.filePath, line: failure.location.line,
          column: failure.location.column))
    }, fileID: fileID, filePath: filePath, line: line, column: column)
}
