@_spi(Backend) import Coffer
import CofferMacroSupport
import Foundation

/// A record in groups, indexed on group and time, for the in-place read checks.
struct Entry: Equatable {
  var id: Int64
  var group: Int64
  var at: Date
  var note: String?
  var weight: Double

  static var indexes: [Index] { [.on("group", "at")] }

  /// 40 entries in 4 groups, their times tying in pairs within a group, every third note null, inserted out of
  /// id order.
  static let sample: [Entry] = (1...40).reversed().map { (id: Int) -> Entry in
    let at = Date(timeIntervalSince1970: 1_700_000_000 + Double(id / 8))
    let note: String? = id.isMultiple(of: 3) ? nil : "note \(id)"
    return Entry(id: Int64(id), group: Int64(id % 4), at: at, note: note, weight: Double(id) / 4)
  }
}

// What `@Storable` generates for Entry, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension Entry: Storable, KeyPathStorable {
  public static var entityName: String {
    "Entry"
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("group", \Self.group, in: entity),
      CofferMacroSupport.StoredField.field("at", \Self.at, in: entity),
      CofferMacroSupport.StoredField.field("note", \Self.note, in: entity),
      CofferMacroSupport.StoredField.field("weight", \Self.weight, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.group, "group", in: entity),
        CofferMacroSupport.StoredField.value(self.at, "at", in: entity),
        CofferMacroSupport.StoredField.value(self.note, "note", in: entity),
        CofferMacroSupport.StoredField.value(self.weight, "weight", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Int64 = try reader.read(1, "group")
    let value2: Date = try reader.read(2, "at")
    let value3: String? = try reader.read(3, "note")
    let value4: Double = try reader.read(4, "weight")
    self.id = value0
    self.group = value1
    self.at = value2
    self.note = value3
    self.weight = value4
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.group:
      "group"
    case \Self.at:
      "at"
    case \Self.note:
      "note"
    case \Self.weight:
      "weight"
    default:
      nil
    }
  }
}

extension ConformanceSuite {
  static let readChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "read.typed-queries-match-values",
      "Typed queries, read in place by the backend, return exactly the stored values: filtered on an index, sorted, sliced."
    ) { context in
      let store = try await context.store(with: Entry.sample)
      let newestFirst: (Entry, Entry) -> Bool = { $0.at != $1.at ? $0.at > $1.at : $0.id < $1.id }
      let group2 = Entry.sample.filter { $0.group == 2 }
      try expectEqual(
        try await store.all(Entry.self), Entry.sample.sorted { $0.id < $1.id }, "every entry, by id")
      try expectEqual(
        try await store.query(Entry.self).filter(\.group == 2).fetch(), group2.sorted { $0.id < $1.id },
        "group 2, by id")
      let page = store.query(Entry.self).filter(\.group == 2).sort(\.at, .descending)
      try expectEqual(try await page.fetch(), group2.sorted(by: newestFirst), "group 2, newest first")
      try expectEqual(
        try await page.offset(2).limit(3).fetch(), Array(group2.sorted(by: newestFirst)[2..<5]),
        "group 2, newest first, offset 2, limit 3")
      try expectEqual(
        try await store.query(Entry.self).filter(\.group == 1 && \.note == nil).fetch(),
        Entry.sample.filter { $0.group == 1 && $0.note == nil }.sorted { $0.id < $1.id },
        "group 1 with no note")
      try expectEqual(
        try await store.query(Entry.self).filter(\.weight > 8.5).sort(\.id, .descending).limit(4).fetch(),
        Array(Entry.sample.filter { $0.weight > 8.5 }.sorted { $0.id > $1.id }.prefix(4)),
        "weight above 8.5, highest id first, limit 4")
    },
    ConformanceCheck(
      "read.by-id-in-order",
      "Reading values by id gives them in the order asked, skipping ids not stored, repeating repeated ids."
    ) { context in
      let store = try await context.store(with: Entry.sample)
      let byID = Dictionary(uniqueKeysWithValues: Entry.sample.map { ($0.id, $0) })
      let asked: [Int64] = [7, 41, 3, 3, 40, 0, 1]
      try expectEqual(
        try await store.get(Entry.self, ids: asked), asked.compactMap { byID[$0] },
        "entries 7, 41, 3, 3, 40, 0, 1")
      try expectEqual(try await store.get(Entry.self, id: 12), byID[12], "entry 12")
      try expectEqual(try await store.get(Entry.self, id: 99), nil, "entry 99")
    },
  ]
}
