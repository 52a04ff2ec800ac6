@_spi(Backend) import Coffer
import Foundation

/// A check that every sample, stored in one batch, comes back equal from get(id) and all().
func roundTripCheck(_ id: String, _ rule: String, _ samples: @escaping @Sendable () -> [Sample])
  -> ConformanceCheck
{
  ConformanceCheck(id, rule) { context in
    let samples = samples()
    let store = try await context.store(with: samples)
    for sample in samples {
      try expectEqual(try await store.get(Sample.self, id: sample.id), sample, "get(\(sample.id))")
    }
    try expectEqual(try await store.all(Sample.self), samples.sorted { $0.id < $1.id }, "all()")
  }
}

/// `count` bytes that are not all alike, including zeros and 0xFF.
func patternedBytes(_ count: Int) -> Data {
  var generator = SplitMix64(seed: UInt64(count))
  return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) })
}

extension ConformanceSuite {
  static let valueChecks: [ConformanceCheck] = [
    roundTripCheck("values.int64-extremes", "Int64.min, Int64.max, 0 and -1 round-trip exactly.") {
      [Int64.min, .max, 0, -1, 1 << 53 + 1].enumerated().map {
        Sample(id: Int64($0.offset + 1), int: $0.element)
      }
    },
    ConformanceCheck(
      "values.double-extremes",
      "±infinity, -0.0 (sign kept), subnormals and the largest doubles round-trip bit for bit."
    ) { context in
      let doubles: [Double] = [
        .infinity, -.infinity, -0.0, 0.0, .leastNonzeroMagnitude, -.greatestFiniteMagnitude, .pi, 0.1,
      ]
      let store = try await context.store(
        with: doubles.enumerated().map { Sample(id: Int64($0.offset), double: $0.element) })
      for (id, double) in doubles.enumerated() {
        let got = try await store.get(Sample.self, id: Int64(id))?.double
        try expectEqual(
          got?.bitPattern, double.bitPattern, "bits of double \(double) read back (got \(show(got)))")
      }
    },
    roundTripCheck("values.bool", "true and false round-trip.") {
      [Sample(id: 1, flag: true), Sample(id: 2, flag: false)]
    },
    roundTripCheck(
      "values.strings-large-and-empty", "The empty string and a 1 MiB string round-trip exactly."
    ) {
      [
        Sample(id: 1, text: ""), Sample(id: 2, text: String(repeating: "abcdefgh", count: 131_072)),
        Sample(id: 3, text: " "),
      ]
    },
    ConformanceCheck(
      "values.strings-byte-exact",
      "Precomposed and decomposed forms, emoji and NUL characters round-trip byte for byte."
    ) { context in
      let texts = [
        "\u{E9}", "e\u{301}", "\u{1F469}\u{200D}\u{1F4BB} \u{1F1EB}\u{1F1F7}", "a\u{0}b", "\u{0}",
        "\u{FEFF}x",
        "\u{5D0}\u{5D1} RTL", "'; DROP TABLE x; --", "\u{10FFFF}", "line\r\nbreak\ttab",
      ]
      let store = try await context.store(
        with: texts.enumerated().map { Sample(id: Int64($0.offset), text: $0.element) })
      for (id, text) in texts.enumerated() {
        let got = try await store.get(Sample.self, id: Int64(id))?.text ?? "<missing>"
        try expect(
          Array(got.utf8) == Array(text.utf8),
          "string \(id): expected UTF-8 \(Array(text.utf8)), got \(Array(got.utf8).prefix(64))")
      }
    },
    roundTripCheck("values.bytes", "Empty bytes, bytes with zeros and 1 MiB of bytes round-trip exactly.") {
      [
        Sample(id: 1, bytes: Data()), Sample(id: 2, bytes: Data([0, 0, 0xFF, 0])),
        Sample(id: 3, bytes: patternedBytes(1 << 20)),
      ]
    },
    ConformanceCheck(
      "values.dates-microseconds", "Dates round-trip to the microsecond, before 1970 and far in the future."
    ) { context in
      let seconds: [Double] = [
        -62_135_596_800.000001, -86_400.123456, -0.000001, 0, 1_700_000_000.654321, 4_102_444_800.000001,
      ]
      let store = try await context.store(
        with: seconds.enumerated().map {
          Sample(id: Int64($0.offset), date: Date(timeIntervalSince1970: $0.element))
        })
      for (id, second) in seconds.enumerated() {
        let expected = Value.microseconds(since1970: Date(timeIntervalSince1970: second))
        let got = try await store.get(Sample.self, id: Int64(id)).map {
          Value.microseconds(since1970: $0.date)
        }
        try expectEqual(got, expected, "microseconds since 1970 of date \(id)")
      }
    },
    roundTripCheck("values.uuid", "UUIDs round-trip, including the all-zero and all-0xFF ones.") {
      [
        Sample(id: 1, uuid: uuid(0, last: 0)), Sample(id: 2, uuid: uuid(0xFF, last: 0xFF)),
        Sample(id: 3, uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? uuid(1, last: 1)),
      ]
    },
    roundTripCheck(
      "values.documents", "Nested Codable values (arrays, dictionaries, optionals, structs) round-trip."
    ) {
      [
        Sample(id: 1),
        Sample(
          id: 2,
          document: Document(
            title: "t\u{E9}\"\\", numbers: [Int.min, 0, Int.max],
            attributes: ["": "", "k\u{0}": "v", "🙂": "x"],
            parts: [.init(x: -0.5, tags: nil), .init(x: 1e300, tags: ["a", ""])], note: "n")),
      ]
    },
    ConformanceCheck("values.enums-store-raw-values", "Enums with raw values are stored as their raw values.")
    { context in
      let store = try await context.store(with: [Sample(id: 1, color: .blue, level: .extreme)])
      try expectEqual(try await store.get(Sample.self, id: 1)?.color, .blue, "color read back")
      try expectEqual(
        try await store.query(Sample.self).filter(FieldRef("color") == "BLUE").count(), 1,
        "count(color == \"BLUE\")")
      try expectEqual(
        try await store.query(Sample.self).filter(FieldRef("level") == -3).count(), 1, "count(level == -3)")
    },
    ConformanceCheck("values.nulls", "Optional fields that are nil round-trip as nil and read as null rows.")
    { context in
      let store = try await context.store(with: [Cell(id: 1), Cell(id: 2, text: "x")])
      try expectEqual(try await store.get(Cell.self, id: 1), Cell(id: 1), "get(1)")
      let rows = try await store.fetchRows(Query(entity: "Cell", filter: FieldRef("id") == 1))
      try expectEqual(rows, [Row([1, nil, nil, nil, nil, nil, nil])], "fetchRows(id == 1)")
    },
    roundTripCheck("values.every-field-at-once", "A value with every kind set round-trips as a whole.") {
      [
        Sample(
          id: 9, flag: true, int: -42, double: -1.25, text: "mixed é", bytes: Data([1, 2, 3]),
          date: Date(timeIntervalSince1970: 1_000_000), uuid: uuid(0x12, last: 0x34), optionalText: "opt",
          document: Document(title: "d", numbers: [1], attributes: ["a": "b"], parts: [], note: nil),
          color: .green,
          level: .high)
      ]
    },
    ConformanceCheck(
      "values.update-indexed-fields-exactly",
      "An update stores indexed values exactly, also where the new value equals the old one loosely: "
        + "-0.0 after 0.0 (and back), a decomposed accent after a precomposed one, a date 1 µs later, "
        + "bytes with one more zero; a filter on the new string finds the row and one on the old does not."
    ) { context in
      let schema = try EntitySchema(
        name: "Exact",
        fields: [
          Field("id", .int), Field("d", .double), Field("s", .string), Field("b", .bytes), Field("t", .date),
          Field("note", .string),
        ],
        idField: "id", indexes: [.on("d"), .unique("s"), .on("b", "t")])
      let store = try await context.store()
      try await store.prepare(schemas: [schema])
      let start = Date(timeIntervalSince1970: 1_000_000)
      func row(_ id: Int64, _ d: Double, _ s: String, _ b: [UInt8], _ t: Date, _ note: String) -> Row {
        Row([.int(id), .double(d), .string(s), .bytes(Data(b)), .date(t), .string(note)])
      }
      try await store.apply(
        ChangeSet(
          [
            .insert(entity: "Exact", row: row(1, 0.0, "caf\u{E9}", [], start, "a")),
            .insert(entity: "Exact", row: row(2, -0.0, "x", [1], start, "b")),
          ], layouts: ["Exact": schema]))
      let later = start.addingTimeInterval(0.000_001)
      let updated = [
        row(1, -0.0, "cafe\u{301}", [0], later, "a"),
        row(2, 0.0, "x", [1], start, "changed"),
      ]
      try await store.apply(
        ChangeSet(updated.map { .update(entity: "Exact", row: $0) }, layouts: ["Exact": schema]))
      let rows = try await store.fetchRows(Query(entity: "Exact", sort: [Sort("id")]))
      try expectEqual(rows, updated, "rows after the update")
      for (got, expected) in zip(rows, updated) {
        guard case .double(let stored) = got[1], case .double(let wanted) = expected[1] else {
          throw CheckFailure("row \(got[0]): d is not a double")
        }
        try expectEqual(stored.sign, wanted.sign, "row \(got[0]): the sign of d")
      }
      let decomposed = try await store.fetchRows(
        Query(entity: "Exact", filter: FieldRef("s") == "cafe\u{301}"))
      try expectEqual(decomposed.map { $0[0] }, [.int(1)], "s == the decomposed form")
      let precomposed = try await store.fetchRows(
        Query(entity: "Exact", filter: FieldRef("s") == "caf\u{E9}"))
      try expectEqual(precomposed.map { $0[0] }, [], "s == the precomposed form")
    },
  ]
}
