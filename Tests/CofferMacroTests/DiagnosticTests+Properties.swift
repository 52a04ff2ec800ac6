import SwiftSyntaxMacrosGenericTestSupport
import Testing

@Suite struct StorablePropertyDiagnostics {
  @Test func aLetWithAnInitialValueAndALazyPropertyAreRejected() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var id: Int64
        let kind = "note"
        lazy var words: [String] = []
      }
      """,
      expandedSource: """
        struct Message {
          var id: Int64
          let kind = "note"
          lazy var words: [String] = []
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "'kind' is a let with an initial value, so a stored value could never be read back into it; make it a var, or mark it @Transient.",
          line: 4, column: 3),
        DiagnosticSpec(
          message: "lazy property 'words' cannot be stored; mark it @Transient or make it a plain var.",
          line: 5, column: 3),
      ])
  }

  @Test func twoPropertiesStoredUnderOneNameAreRejected() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var id: Int64
        @StoredName("text") var body: String
        var text: String
      }
      """,
      expandedSource: """
        struct Message {
          var id: Int64
          var body: String
          var text: String
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "Two properties are stored under the name 'text'; give one another @StoredName.", line: 5,
          column: 7)
      ])
  }

  @Test func indexesDeclaredBothWaysAreRejected() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var id: Int64
        @Indexed var threadID: Int64
        static var indexes: [Index] { [.on("threadID")] }
      }
      """,
      expandedSource: """
        struct Message {
          var id: Int64
          var threadID: Int64
          static var indexes: [Index] { [.on("threadID")] }
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "Declare indexes either with @Indexed/@Unique or with 'static var indexes', not both.",
          line: 2, column: 8)
      ])
  }

  @Test func anIDOptionNamingAnotherPropertyWhenIDExistsIsRejected() {
    assertExpansion(
      """
      @Storable(id: "key")
      struct Message {
        var id: Int64
        var key: String
      }
      """,
      expandedSource: """
        struct Message {
          var id: Int64
          var key: String
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "The type has a property 'id' but @Storable(id: \"key\") names another; Identifiable's id must be the stored id. Drop the option or rename the property.",
          line: 2, column: 8)
      ])
  }

  @Test func aTransientIDIsRejected() {
    assertExpansion(
      """
      @Storable
      struct Message {
        @Transient var id = 0
        var text: String
      }
      """,
      expandedSource: """
        struct Message {
          var id = 0
          var text: String
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message: "The id 'id' must be a stored property, not computed or @Transient.", line: 3, column: 18)
      ])
  }
}
