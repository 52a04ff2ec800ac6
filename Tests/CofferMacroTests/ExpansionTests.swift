import Testing

@Suite struct StorableExpansion {
  @Test func aPlainStructGetsSchemaCodecAndKeyPaths() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var id: Int64
        @Indexed var threadID: Int64
        var text: String = ""
        var readAt: Date?
      }
      """,
      expandedSource: #"""
        struct Message {
          var id: Int64
          var threadID: Int64
          var text: String = ""
          var readAt: Date?
        }

        extension Message: Storable, KeyPathStorable {
          public static var entityName: String {
            "Message"
          }

          public static var indexes: [Coffer.Index] {
            [.on("threadID")]
          }

          public static var fieldDefaults: [String: Coffer.Value] {
            var defaults: [String: Coffer.Value] = [:]
            defaults["text"] = CofferMacroSupport.StoredField.defaultValue(\Self.text, "", in: Self.entityName)
            return defaults
          }

          public static func _storedFields() throws -> [Coffer.Field]? {
            let entity = Self.entityName
            return try [
              CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
              CofferMacroSupport.StoredField.field("threadID", \Self.threadID, in: entity),
              CofferMacroSupport.StoredField.field("text", \Self.text, in: entity),
              CofferMacroSupport.StoredField.field("readAt", \Self.readAt, in: entity),
            ]
          }

          public func _storedRow() throws -> Coffer.Row {
            let entity = Self.entityName
            return Coffer.Row(try [
              CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
              CofferMacroSupport.StoredField.value(self.threadID, "threadID", in: entity),
              CofferMacroSupport.StoredField.value(self.text, "text", in: entity),
              CofferMacroSupport.StoredField.value(self.readAt, "readAt", in: entity),
            ])
          }

          public init(_storedRow row: Coffer.StoredRow) throws {
            let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
            let value0: Int64 = try reader.read(0, "id")
            let value1: Int64 = try reader.read(1, "threadID")
            let value2: String = try reader.read(2, "text")
            let value3: Date? = try reader.read(3, "readAt")
            self.id = value0
            self.threadID = value1
            self.text = value2
            self.readAt = value3
          }

          public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
            switch keyPath {
            case \Self.id:
              "id"
            case \Self.threadID:
              "threadID"
            case \Self.text:
              "text"
            case \Self.readAt:
              "readAt"
            default:
              nil
            }
          }
        }
        """#)
  }

  @Test func optionsRenameTheEntityPickTheIDAndWriteCodingKeys() {
    assertExpansion(
      """
      @Storable(entity: "Contact", id: "email")
      public struct Person {
        @StoredName("mail") public var email: String
        @Unique var handle: String?
        var mood = Mood.calm
        @Transient var isSelected = false
        var initials: String { "" }
      }
      """,
      expandedSource: #"""
        public struct Person {
          public var email: String
          var handle: String?
          var mood = Mood.calm
          var isSelected = false
          var initials: String { "" }

          enum CodingKeys: String, CodingKey {
            case email = "mail"
            case handle
            case mood
          }
        }

        extension Person: Storable, KeyPathStorable {
          public static var entityName: String {
            "Contact"
          }

          public static var idField: String {
            "mail"
          }

          public static var indexes: [Coffer.Index] {
            [.unique("handle")]
          }

          public static var fieldDefaults: [String: Coffer.Value] {
            var defaults: [String: Coffer.Value] = [:]
            defaults["mood"] = CofferMacroSupport.StoredField.defaultValue(\Self.mood, Mood.calm, in: Self.entityName)
            return defaults
          }

          public var id: String {
            email
          }

          public static func _storedFields() throws -> [Coffer.Field]? {
            let entity = Self.entityName
            return try [
              CofferMacroSupport.StoredField.field("mail", \Self.email, in: entity),
              CofferMacroSupport.StoredField.field("handle", \Self.handle, in: entity),
              CofferMacroSupport.StoredField.field("mood", \Self.mood, in: entity),
            ]
          }

          public func _storedRow() throws -> Coffer.Row {
            let entity = Self.entityName
            return Coffer.Row(try [
              CofferMacroSupport.StoredField.value(self.email, "mail", in: entity),
              CofferMacroSupport.StoredField.value(self.handle, "handle", in: entity),
              CofferMacroSupport.StoredField.value(self.mood, "mood", in: entity),
            ])
          }

          public init(_storedRow row: Coffer.StoredRow) throws {
            let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
            self.email = try reader.read(0, "mail")
            self.handle = try reader.read(1, "handle")
            self.mood = try reader.read(2, "mood")
          }

          public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
            switch keyPath {
            case \Self.email:
              "mail"
            case \Self.handle:
              "handle"
            case \Self.mood:
              "mood"
            case \Self.id:
              "mail"
            default:
              nil
            }
          }
        }
        """#)
  }

  @Test func handWrittenCodingKeysNameTheFieldsAndLeaveOutTheRest() {
    assertExpansion(
      """
      @Storable
      struct Message {
        var id: Int64
        var text: String
        var cache: [String] = []
        enum CodingKeys: String, CodingKey {
          case id, text = "body"
        }
      }
      """,
      expandedSource: #"""
        struct Message {
          var id: Int64
          var text: String
          var cache: [String] = []
          enum CodingKeys: String, CodingKey {
            case id, text = "body"
          }
        }

        extension Message: Storable, KeyPathStorable {
          public static var entityName: String {
            "Message"
          }

          public static func _storedFields() throws -> [Coffer.Field]? {
            let entity = Self.entityName
            return try [
              CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
              CofferMacroSupport.StoredField.field("body", \Self.text, in: entity),
            ]
          }

          public func _storedRow() throws -> Coffer.Row {
            let entity = Self.entityName
            return Coffer.Row(try [
              CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
              CofferMacroSupport.StoredField.value(self.text, "body", in: entity),
            ])
          }

          public init(_storedRow row: Coffer.StoredRow) throws {
            let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
            let value0: Int64 = try reader.read(0, "id")
            let value1: String = try reader.read(1, "body")
            self.id = value0
            self.text = value1
          }

          public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
            switch keyPath {
            case \Self.id:
              "id"
            case \Self.text:
              "body"
            default:
              nil
            }
          }
        }
        """#)
  }
}
