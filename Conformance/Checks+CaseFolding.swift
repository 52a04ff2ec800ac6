@_spi(Backend) import Coffer

/// Cells whose texts differ from ASCII letters only outside ASCII: Kelvin sign, dotted capital
/// I, sharp s, the long s, the ligature ﬀ, and accented letters, plus a null text.
let foldingCells: [Cell] = [
  Cell(id: 1, text: "Kelvin"), Cell(id: 2, text: "\u{212A}elvin"), Cell(id: 3, text: "\u{130}stanbul"),
  Cell(id: 4, text: "istanbul"), Cell(id: 5, text: "STRASSE"), Cell(id: 6, text: "stra\u{DF}e"),
  Cell(id: 7, text: "\u{17F}ome"), Cell(id: 8, text: "\u{FB00}ix"), Cell(id: 9, text: "CAF\u{C9}"),
  Cell(id: 10, text: "caf\u{E9}"), Cell(id: 11, text: nil),
]

extension ConformanceSuite {
  static let caseFoldingChecks: [ConformanceCheck] = [
    itemFilterCheck(
      "filter.contains-ignoring-case", "containsIgnoringCase matches ASCII letters of either case.",
      [
        (FieldRef("name").contains("AN", ignoringCase: true), [2], "contains AN ignoring case"),
        (FieldRef("name").contains("A", ignoringCase: true), [1, 2, 4, 7, 8], "contains A ignoring case"),
        (FieldRef("name").contains("A"), [7], "contains A"),
        (FieldRef("name").contains("PpL", ignoringCase: true), [1, 4], "contains PpL ignoring case"),
        (
          FieldRef("name").contains("", ignoringCase: true), [1, 2, 3, 4, 5, 6, 7, 8],
          "contains \"\" ignoring case"
        ),
      ]),
    itemFilterCheck(
      "filter.prefix-suffix-ignoring-case",
      "hasPrefix and hasSuffix ignoring case fold ASCII letters on both sides, and only at that end.",
      [
        (FieldRef("name").hasPrefix("b", ignoringCase: true), [2], "hasPrefix b ignoring case"),
        (FieldRef("name").hasPrefix("APP", ignoringCase: true), [1, 4], "hasPrefix APP ignoring case"),
        (FieldRef("name").hasPrefix("Éc", ignoringCase: true), [7], "hasPrefix Éc ignoring case"),
        (FieldRef("name").hasSuffix("AIR", ignoringCase: true), [7], "hasSuffix AIR ignoring case"),
        (FieldRef("name").hasSuffix("E", ignoringCase: true), [1, 4, 8], "hasSuffix E ignoring case"),
        (FieldRef("name").hasSuffix("AP", ignoringCase: true), [], "hasSuffix AP ignoring case"),
      ]),
    itemFilterCheck(
      "filter.equal-ignoring-case", "equalIgnoringCase matches whole strings only; \"\" matches only \"\".",
      [
        (FieldRef("name").equals("APPLE", ignoringCase: true), [1, 4], "equals APPLE ignoring case"),
        (FieldRef("name").equals("APPL", ignoringCase: true), [], "equals APPL ignoring case"),
        (FieldRef("name").equals("", ignoringCase: true), [6], "equals \"\" ignoring case"),
        (FieldRef("name").equals("Éclair", ignoringCase: true), [7], "equals Éclair ignoring case"),
        (FieldRef("name").equals("éclair", ignoringCase: true), [], "equals éclair ignoring case"),
        (FieldRef("name").equals("APPLE", ignoringCase: false), [], "equals APPLE exactly"),
      ]),
    itemFilterCheck(
      "filter.ignoring-case-wildcards-literal", "%, _ and * stay ordinary characters when ignoring case.",
      [
        (FieldRef("name").contains("%_OFF", ignoringCase: true), [5], "contains %_OFF ignoring case"),
        (FieldRef("name").contains("_", ignoringCase: true), [5], "contains _ ignoring case"),
        (FieldRef("name").hasPrefix("%", ignoringCase: true), [], "hasPrefix % ignoring case"),
        (FieldRef("name").contains("A_P", ignoringCase: true), [], "contains A_P ignoring case"),
        (FieldRef("name").hasSuffix("F*", ignoringCase: true), [5], "hasSuffix F* ignoring case"),
        (FieldRef("name").equals("100%_OFF*", ignoringCase: true), [5], "equals 100%_OFF* ignoring case"),
      ]),
    ConformanceCheck(
      "filter.ignoring-case-ascii-only",
      "Ignoring case folds A-Z only: not the Kelvin sign, dotted I, sharp s, long s, ligatures or É."
    ) { context in
      let store = try await context.store(with: foldingCells)
      let cases: [(Filter, [Int64], String)] = [
        (FieldRef("text").hasPrefix("k", ignoringCase: true), [1], "hasPrefix k"),
        (FieldRef("text").hasPrefix("\u{212A}", ignoringCase: true), [2], "hasPrefix Kelvin sign"),
        (FieldRef("text").hasPrefix("i", ignoringCase: true), [4], "hasPrefix i"),
        (FieldRef("text").contains("ss", ignoringCase: true), [5], "contains ss"),
        (FieldRef("text").contains("\u{DF}", ignoringCase: true), [6], "contains ß"),
        (FieldRef("text").hasPrefix("s", ignoringCase: true), [5, 6], "hasPrefix s"),
        (FieldRef("text").hasPrefix("ff", ignoringCase: true), [], "hasPrefix ff"),
        (FieldRef("text").hasSuffix("\u{E9}", ignoringCase: true), [10], "hasSuffix é"),
        (FieldRef("text").equals("caf\u{C9}", ignoringCase: true), [9], "equals cafÉ"),
        (FieldRef("text").equals("KELVIN", ignoringCase: true), [1], "equals KELVIN"),
      ]
      for (filter, expected, what) in cases {
        try await expectIDs(
          store.query(Cell.self).filter(filter), expected, "ids where text \(what) ignoring case")
      }
    },
    ConformanceCheck(
      "filter.ignoring-case-null-and-not",
      "A test ignoring case never matches null, and not(_:) of it matches exactly the other rows."
    ) { context in
      let store = try await context.store(with: foldingCells)
      let filter = FieldRef("text").contains("E", ignoringCase: true)
      try await expectIDs(store.query(Cell.self).filter(filter), [1, 2, 5, 6, 7], "ids containing e/E")
      try await expectIDs(
        store.query(Cell.self).filter(!filter), [3, 4, 8, 9, 10, 11], "ids not containing e/E")
      try expectEqual(try await store.query(Cell.self).filter(!filter).count(), 6, "count not containing e/E")
      try await expectIDs(
        store.query(Cell.self).filter(FieldRef("text").equals("", ignoringCase: true)), [],
        "ids where text equals \"\" ignoring case")
    },
    ConformanceCheck(
      "filter.ignoring-case-key-paths",
      "Key-path string filters take ignoringCase, in sorts and counts, and for deletes by query."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let query = store.query(Item.self).filter(.contains(\.name, "APP", ignoringCase: true)).sort(
        \.id, .descending)
      try await expectIDs(query, [4, 1], "ids where name contains APP ignoring case, id descending")
      try expectEqual(try await query.count(), 2, "count")
      try await expectIDs(
        store.query(Item.self).filter(
          KeyPathFilter<Item>.equalsIgnoringCase(\.name, "BANANA")
            || KeyPathFilter<Item>.hasSuffix(\.name, "Y", ignoringCase: true)),
        [2, 3], "ids where name is banana or ends with y, ignoring case")
      try expectEqual(
        try await store.query(Item.self).filter(.hasPrefix(\.name, "éC", ignoringCase: true)).delete(), 0,
        "deleted where name starts with éC ignoring case")
      try expectEqual(
        try await store.query(Item.self).filter(.hasPrefix(\.name, "ÉC", ignoringCase: true)).delete(), 1,
        "deleted where name starts with ÉC ignoring case")
      try await expectIDs(store.query(Item.self), [1, 2, 3, 4, 5, 6, 8], "ids left")
    },
    ConformanceCheck(
      "filter.ignoring-case-needs-string", "A test ignoring case on a field that is not a string is refused."
    ) { context in
      let store = try await context.store(with: Item.sample)
      _ = try await expectThrows(.invalidQuery, "containsIgnoringCase on an integer field") {
        try await store.query(Item.self).filter(FieldRef("rank").contains("1", ignoringCase: true)).fetch()
      }
    },
  ]
}
