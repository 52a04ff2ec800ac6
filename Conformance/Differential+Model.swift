import Coffer
import Foundation

/// One step of a differential run: a batch to apply or a query to answer.
enum DifferentialStep: Sendable, Hashable {
  case apply([ChangeSet.Operation])
  case fetch(Query)
  case count(Query)
}

/// The two entities the differential check works on, and the values it draws from.
enum DifferentialModel {
  static let first = "DiffA"
  static let second = "Diff \"B\""

  static func schemas() throws -> [EntitySchema] {
    [
      try EntitySchema(
        name: first,
        fields: [
          Field("id", .int), Field("k", .int, isOptional: true), Field("s", .string, isOptional: true),
          Field("d", .double, isOptional: true), Field("u", .int, isOptional: true),
          Field("b", .bool, isOptional: true), Field("at", .date, isOptional: true),
        ],
        idField: "id", indexes: [.unique("u"), .on("k", "s")]),
      try EntitySchema(
        name: second,
        fields: [
          Field("key", .string), Field("n", .int), Field("t", .string, isOptional: true),
          Field("x", .bytes, isOptional: true), Field("g", .uuid, isOptional: true),
        ],
        idField: "key", indexes: [.unique("t", "n")]),
    ]
  }

  static let ints: [Value] = [-2, -1, 0, 1, 2, 3, .int(.min), .int(.max)]
  static let strings: [Value] = ["", "a", "A", "b", "ab", "\u{E9}", "e\u{301}", "%", "_", "a%b", "Z", "zz"]
  static let doubles: [Value] = [.double(-.infinity), -1.5, .double(-0.0), 0.0, 1.0, 2.5, .double(.infinity)]
  static let dates: [Value] = ([-1_000_001, 0, 1, 1_700_000_000_123_456] as [Int64]).map {
    .date(Value.date(microsecondsSince1970: $0))
  }
  static let firstIDs: [Value] = (0..<10).map { .int(Int64($0)) }
  static let secondIDs: [Value] = ["a", "b", "c", " ", "\u{E9}", "e\u{301}", "%"]
  static let uniqueInts: [Value] = (0..<5).map { .int(Int64($0)) }
  static let uniqueStrings: [Value] = ["x", "y", "X"]
  static let bytes: [Value] = [Data(), Data([0]), Data([0, 1]), Data([1]), Data([0xFF])].map { .bytes($0) }
  static let uuids: [Value] = [uuid(0, last: 1), uuid(0x80, last: 0), uuid(0xFF, last: 0xFF)].map {
    .uuid($0)
  }

  /// The values a field of an entity draws from (nulls are added separately for optional fields).
  static func pool(_ entity: String, _ field: String) -> [Value] {
    switch (entity == first, field) {
    case (true, "id"): firstIDs
    case (true, "k"): ints
    case (true, "s"): strings
    case (true, "d"): doubles
    case (true, "u"): uniqueInts
    case (true, "b"): [true, false]
    case (true, "at"): dates
    case (false, "key"): secondIDs
    case (false, "n"): [0, 1, 2]
    case (false, "t"): uniqueStrings
    case (false, "x"): bytes
    case (false, "g"): uuids
    default: [.null]
    }
  }
}
