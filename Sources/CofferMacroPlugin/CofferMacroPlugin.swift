import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin that provides Coffer's macros.
@main struct CofferMacroPlugin: CompilerPlugin {
  let providingMacros: [any Macro.Type] = [StorableMacro.self, FieldMarkerMacro.self]
}
