@_spi(Backend) import Coffer
import Foundation

/// Data with every value kind and its extremes, in entities known only at run time — what the
/// data tools' checks copy, export and verify, and what a test of the tools across backends can
/// fill a store with.
///
/// Three entities, one per kind of id (`Every` by integer, `Named` by string, `Keyed` by UUID),
/// with optional and required fields of every kind, a field with a default, a unique index,
/// an index and a compound index. Rows hold Int64.min and max, ±infinity, -0.0 and subnormal
/// doubles, strings with NUL, decomposed accents, emoji and `%_*` (and a 100,000-byte one),
/// empty and binary bytes,
/// dates before 1970 and far ahead to the microsecond, and nested documents.
public enum EveryKindFixture {
  /// The entities' schemas, sorted by name.
  public static let schemas: [EntitySchema] = {
    do {
      var every: [Field] = [Field("id", .int)]
      for kind in FieldKind.allCases {
        every.append(Field(kind.rawValue, kind))
        every.append(Field("optional " + kind.rawValue, kind, isOptional: true))
      }
      every.append(Field("level", .int, default: .int(3)))
      return [
        try EntitySchema(
          name: "Every", fields: every, idField: "id",
          indexes: [.unique("string"), .on("int"), .on("bool", "date")]),
        try EntitySchema(
          name: "Keyed", fields: [Field("id", .uuid), Field("note", .string, isOptional: true)],
          idField: "id",
          indexes: [.on("note")]),
        try EntitySchema(
          name: "Named", fields: [Field("id", .string), Field("rank", .double), Field("seen", .date)],
          idField: "id", indexes: [.unique("rank")]),
      ]
    } catch {
      preconditionFailure("The fixture's schemas are well formed: \(error)")
    }
  }()

  /// The schema of an entity of the fixture.
  public static func schema(_ name: String) -> EntitySchema {
    guard let schema = schemas.first(where: { $0.name == name }) else {
      preconditionFailure("The fixture has no entity \(name)")
    }
    return schema
  }

  /// A batch inserting `extra` ordinary rows of `Every` beside the rows of extremes (more
  /// rows make a copy or an export take several batches), and the rows of `Named` and `Keyed`.
  @_spi(Backend) public static func changeSet(extra: Int = 0) -> ChangeSet {
    var operations: [ChangeSet.Operation] = []
    let rows = extremes() + (0..<extra).map { ordinary(Int64($0) + 1_000) }
    operations.append(.insertMany(entity: "Every", rows: RowSource(rows)))
    let names = ["", "a", "A", "é", "e\u{301}", "\u{0}", "z%_*", "🙂", String(repeating: "long ", count: 60)]
    operations.append(
      .insertMany(
        entity: "Named",
        rows: RowSource(
          names.enumerated().map { offset, name in
            Row([
              .string(name), .double(Double(offset) - 4.5), date(microseconds: Int64(offset) * 1_000_001 - 7),
            ])
          })))
    operations.append(
      .insertMany(
        entity: "Keyed",
        rows: RowSource(
          (0..<9).map { number in
            Row([.uuid(uuid(number)), number.isMultiple(of: 3) ? .null : .string("note \(number % 4)")])
          })))
    return ChangeSet(operations, layouts: Dictionary(uniqueKeysWithValues: schemas.map { ($0.name, $0) }))
  }

  /// Rows of `Every` that hold each kind's extremes.
  static func extremes() -> [Row] {
    let ints: [Int64] = [.min, .max, 0, -1, 1 << 53 + 1]
    let doubles: [Double] = [
      .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, -.greatestFiniteMagnitude, 0.1,
    ]
    let strings = ["", "\u{0}x", "e\u{301}", "é", "🙂👍🏽", "100%_*\\\"\n\t", String(repeating: "ü", count: 100)]
    let bytes = [
      Data(), Data([0, 255, 0x22, 0x5C, 10]), Data((0..<4_096).map { UInt8(truncatingIfNeeded: $0 * 7) }),
    ]
    // Within 2^53 microseconds of 1970 (about 285 years), where a `Date` holds every microsecond.
    let dates: [Int64] = [-8_000_000_000_000_001, -1, 0, 1_700_000_000_123_456, 7_000_000_000_000_001]
    let documents = [Data(#"{"a":[1,2,{"b":null}],"c":"é"}"#.utf8), Data("[]".utf8)]
    var rows: [Row] = []
    for number in 0..<8 {
      var values: [Value] = [.int(Int64(number) - 4)]
      let fields: [(Value, Bool)] = [
        (.bool(number.isMultiple(of: 2)), true),
        (.int(ints[number % ints.count]), true),
        (.double(doubles[number % doubles.count]), true),
        (.string(strings[number % strings.count] + (number >= strings.count ? "#\(number)" : "")), true),
        (.bytes(bytes[number % bytes.count]), true),
        (date(microseconds: dates[number % dates.count]), true),
        (.uuid(uuid(number)), true),
        (.document(documents[number % documents.count]), true),
      ]
      for (value, _) in fields {
        values.append(value)
        values.append(number.isMultiple(of: 3) ? .null : value)
      }
      values.append(.int(Int64(number)))
      if number == 4 {
        // A long text where no index holds it (LMDB keys hold at most 511 bytes).
        values[8] = .string(String(repeating: "long text ", count: 10_000))
      }
      rows.append(Row(values))
    }
    return rows
  }

  /// An ordinary row of `Every`.
  static func ordinary(_ id: Int64) -> Row {
    var values: [Value] = [.int(id)]
    let fields: [Value] = [
      .bool(id.isMultiple(of: 2)), .int(id * 31 % 97), .double(Double(id) / 8), .string("row \(id)"),
      .bytes(Data([UInt8(truncatingIfNeeded: id)])), date(microseconds: id * 1_000_003),
      .uuid(uuid(Int(id))), .document(Data("[\(id)]".utf8)),
    ]
    for value in fields {
      values.append(value)
      values.append(id.isMultiple(of: 5) ? .null : value)
    }
    values.append(.int(id % 4))
    return Row(values)
  }

  private static func date(microseconds: Int64) -> Value {
    .date(Value.date(microsecondsSince1970: microseconds))
  }

  private static func uuid(_ number: Int) -> UUID {
    var generator = SplitMix64(seed: UInt64(number) &+ 0x5EED)
    let high = generator.next()
    let low = generator.next()
    let bytes = withUnsafeBytes(of: (high, low)) { Array($0) }
    return UUID(
      uuid: (
        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
        bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
      ))
  }
}
