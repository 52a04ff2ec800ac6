import SwiftSyntaxMacrosGenericTestSupport
import Testing

@Suite struct StorableDiagnostics {
  @Test func aClassIsRejectedWithAFixItToMakeItAStruct() {
    assertExpansion(
      """
      @Storable
      class Message {
        var id: Int64 = 0
      }
      """,
      expandedSource: """
        class Message {
          var id: Int64 = 0
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "@Storable applies to structs, not to a class: stored models are values. Make it a struct.",
          line: 2, column: 1, fixIts: [FixItSpec(message: "Make it a struct")])
      ],
      applyFixIts: ["Make it a struct"],
      fixedSource: """
        @Storable
        struct Message {
          var id: Int64 = 0
        }
        """)
  }

  @Test func aTypeWithoutAnIDIsRejectedWithAFixItThatAddsOne() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var text: String
      }
      """,
      expandedSource: """
        struct Message {
          var text: String
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "@Storable type 'Message' has no stored property 'id' to use as its id. Add one (Int64, Int, "
            + "String or UUID), or name another with @Storable(id: \"…\").",
          line: 2, column: 8, fixIts: [FixItSpec(message: "Add 'var id: UUID'")])
      ],
      applyFixIts: ["Add 'var id: UUID'"],
      fixedSource: """
        @Storable
        struct Message {
          var id: UUID
          var text: String
        }
        """)
  }

  @Test func anIDOptionNamingNoPropertyIsRejected() {
    assertExpansion(
      """
      @Storable(id: "key")
      struct Message {
        var text: String
      }
      """,
      expandedSource: """
        struct Message {
          var text: String
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "@Storable type 'Message' has no stored property 'key' to use as its id. Add one (Int64, Int, "
            + "String or UUID), or name another with @Storable(id: \"…\").",
          line: 2, column: 8)
      ])
  }

  @Test func unsupportedPropertyTypesAreRejected() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var id: Int64
        var onTap: () -> Void
        var pair: (Int, Int)
        var anything: Any
        var shape: (any Shape)?
      }
      """,
      expandedSource: """
        struct Message {
          var id: Int64
          var onTap: () -> Void
          var pair: (Int, Int)
          var anything: Any
          var shape: (any Shape)?
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "Property 'onTap' of type '() -> Void' cannot be stored: functions are not data; store what "
            + "they act on instead. Mark it @Transient to leave it out of storage.",
          line: 4, column: 14),
        DiagnosticSpec(
          message:
            "Property 'pair' of type '(Int, Int)' cannot be stored: tuples are not Codable; use a struct "
            + "instead. Mark it @Transient to leave it out of storage.",
          line: 5, column: 13),
        DiagnosticSpec(
          message:
            "Property 'anything' of type 'Any' cannot be stored: 'Any' has no fixed stored form; use a "
            + "concrete type. Mark it @Transient to leave it out of storage.",
          line: 6, column: 17),
        DiagnosticSpec(
          message:
            "Property 'shape' of type '(any Shape)?' cannot be stored: 'any' types have no fixed stored "
            + "form; use a concrete type. Mark it @Transient to leave it out of storage.",
          line: 7, column: 14),
      ])
  }

  @Test func aComputedPropertyMarkedForStorageIsRejectedWithAFixItThatRemovesTheMarker() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var id: Int64
        @Indexed var preview: String { "" }
      }
      """,
      expandedSource: """
        struct Message {
          var id: Int64
          var preview: String { "" }
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "'preview' is a computed property and is not stored, so @Indexed has no effect; remove it, or "
            + "make 'preview' a stored property.",
          line: 4, column: 3, fixIts: [FixItSpec(message: "Remove @Indexed")])
      ],
      applyFixIts: ["Remove @Indexed"],
      fixedSource: """
        @Storable
        struct Message {
          var id: Int64
          var preview: String { "" }
        }
        """)
  }

  @Test func aTransientPropertyWithoutAnInitialValueIsRejected() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var id: Int64
        @Transient var cache: [String]
      }
      """,
      expandedSource: """
        struct Message {
          var id: Int64
          var cache: [String]
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "@Transient property 'cache' needs an initial value: it is not stored, so reading a value back "
            + "has nothing else to give it.",
          line: 4, column: 18)
      ])
  }

  @Test func codingKeysThatAreNotAPlainEnumAreRejected() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var id: Int64
        typealias CodingKeys = OtherKeys
      }
      """,
      expandedSource: """
        struct Message {
          var id: Int64
          typealias CodingKeys = OtherKeys
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "@Storable reads CodingKeys only as an enum of plain cases with string raw values; write it so, or remove it and rename fields with @StoredName(\"…\") or leave them out with @Transient.",
          line: 4, column: 13)
      ])
  }

  @Test func aPropertyLeftOutOfCodingKeysNeedsAnInitialValue() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var id: Int64
        var cache: [String]
        enum CodingKeys: String, CodingKey { case id }
      }
      """,
      expandedSource: """
        struct Message {
          var id: Int64
          var cache: [String]
          enum CodingKeys: String, CodingKey { case id 
        }
        }
        """,
      diagnostics: [
        DiagnosticSpec(
          message:
            "'cache' is not in CodingKeys, so it is not stored, but it has no initial value to take when a value is read back; add it to CodingKeys or give it an initial value.",
          line: 4, column: 7)
      ])
  }
}
