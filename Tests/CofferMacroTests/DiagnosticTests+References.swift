import SwiftSyntaxMacrosGenericTestSupport
import Testing

@Suite struct StorableReferenceDiagnostics {
  @Test func referencesDeclaredBothWaysAreRejected() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var id: Int64
        @Reference(Thread.self) var threadID: Int64
        static var references: [EntityReference] { [] }
      }
      """,
      expandedSource: """
        struct Message {
          var id: Int64
          var threadID: Int64
          static var references: [EntityReference] { [] }
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "Declare references either with @Reference or with 'static var references', not both.",
          line: 2, column: 8)
      ])
  }

  @Test func aReferenceWithoutItsTargetTypeIsRejected() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var id: Int64
        @Reference(onDelete: .cascade) var threadID: Int64
      }
      """,
      expandedSource: """
        struct Message {
          var id: Int64
          var threadID: Int64
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "@Reference names the referenced type: @Reference(ChatThread.self, onDelete: .cascade).",
          line: 4, column: 3)
      ])
  }
}
