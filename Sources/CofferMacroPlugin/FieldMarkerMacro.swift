import SwiftSyntax
import SwiftSyntaxMacros

/// `@Indexed`, `@Unique`, `@StoredName`, `@Transient` and `@Reference`: markers that `@Storable` reads. They
/// generate nothing themselves; `@Storable` reports a marker on a property it cannot store.
public struct FieldMarkerMacro: PeerMacro {
  /// Nothing: the marker only informs `@Storable`.
  public static func expansion(
    of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
    in context: some MacroExpansionContext
  ) throws -> [DeclSyntax] { [] }
}
