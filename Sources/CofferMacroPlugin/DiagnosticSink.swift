import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// Reports `@Storable`'s diagnostics to the compiler and remembers whether any was an error.
final class DiagnosticSink {
  private let report: (Diagnostic) -> Void
  private(set) var hasErrors = false

  init(_ context: some MacroExpansionContext) {
    self.report = { context.diagnose($0) }
  }

  /// A sink that only records whether there were errors.
  init(silent: Void) {
    self.report = { _ in }
  }

  /// Reports an error at a node, with an optional fix-it.
  func error(
    _ message: StorableDiagnostic, at node: Syntax, fixIt: StorableFixIt? = nil, changes: [FixIt.Change] = []
  ) {
    hasErrors = true
    let fixIts = fixIt.map { [FixIt(message: $0, changes: changes)] } ?? []
    report(Diagnostic(node: node, message: message, fixIts: fixIts))
  }
}
