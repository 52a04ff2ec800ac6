@_spi(Backend) import Coffer
import CofferMacroSupport
import Foundation

/// A record with pairs of fields of one kind, to compare two fields of one row.
struct Span: Equatable {
  var id: Int64
  var start: Int64
  var end: Int64?
  var title: String
  var note: String?
  var opened: Date
  var edited: Date?

  /// Five spans: ends before, at and after their starts, a null end, a null note and edit date,
  /// and titles that differ from their notes only in case or by code point.
  static let sample: [Span] = {
    let day = Date(timeIntervalSince1970: 1_700_000_000)
    func at(_ days: Double) -> Date { day.addingTimeInterval(days * 86_400) }
    return [
      Span(id: 1, start: 1, end: 5, title: "a", note: "A", opened: at(0), edited: at(1)),
      Span(id: 2, start: 5, end: 5, title: "b", note: "b", opened: at(2), edited: at(1)),
      Span(id: 3, start: 7, end: nil, title: "c", note: nil, opened: at(1), edited: nil),
      Span(id: 4, start: 9, end: 3, title: "\u{C9}", note: "\u{E9}", opened: at(1), edited: at(1)),
      Span(id: 5, start: -2, end: 0, title: "Z", note: "a", opened: at(3), edited: at(4)),
    ]
  }()
}

// What `@Storable` generates for Span, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension Span: Storable, KeyPathStorable {
  public static var entityName: String {
    "Span"
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("start", \Self.start, in: entity),
      CofferMacroSupport.StoredField.field("end", \Self.end, in: entity),
      CofferMacroSupport.StoredField.field("title", \Self.title, in: entity),
      CofferMacroSupport.StoredField.field("note", \Self.note, in: entity),
      CofferMacroSupport.StoredField.field("opened", \Self.opened, in: entity),
      CofferMacroSupport.StoredField.field("edited", \Self.edited, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.start, "start", in: entity),
        CofferMacroSupport.StoredField.value(self.end, "end", in: entity),
        CofferMacroSupport.StoredField.value(self.title, "title", in: entity),
        CofferMacroSupport.StoredField.value(self.note, "note", in: entity),
        CofferMacroSupport.StoredField.value(self.opened, "opened", in: entity),
        CofferMacroSupport.StoredField.value(self.edited, "edited", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Int64 = try reader.read(1, "start")
    let value2: Int64? = try reader.read(2, "end")
    let value3: String = try reader.read(3, "title")
    let value4: String? = try reader.read(4, "note")
    let value5: Date = try reader.read(5, "opened")
    let value6: Date? = try reader.read(6, "edited")
    self.id = value0
    self.start = value1
    self.end = value2
    self.title = value3
    self.note = value4
    self.opened = value5
    self.edited = value6
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.start:
      "start"
    case \Self.end:
      "end"
    case \Self.title:
      "title"
    case \Self.note:
      "note"
    case \Self.opened:
      "opened"
    case \Self.edited:
      "edited"
    default:
      nil
    }
  }
}
