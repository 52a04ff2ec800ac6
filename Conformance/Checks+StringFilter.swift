@_spi(Backend) import Coffer

/// Texts whose code-point order differs from most collations: "" < "Z" < "a" < "ab" <
/// "e\u{301}" < "zebra" < "Ä" < "é".
let orderedTexts = ["", "Z", "a", "ab", "e\u{301}", "zebra", "\u{C4}", "\u{E9}"]

/// Cells with ``orderedTexts`` under shuffled ids, so that id order is not text order.
let textCells: [Cell] = zip([Int64(5), 3, 8, 1, 7, 2, 6, 4], orderedTexts).map { Cell(id: $0, text: $1) }

/// The ids of ``textCells`` whose text satisfies a condition, in id order.
func textCellIDs(_ condition: (String) -> Bool) -> [Int64] {
  textCells.filter { condition($0.text ?? "") }.map(\.id).sorted()
}

extension ConformanceSuite {
  static let stringFilterChecks: [ConformanceCheck] = [
    itemFilterCheck(
      "filter.contains-case-sensitive", "contains is case-sensitive.",
      [
        (FieldRef("name").contains("an"), [2], "name contains an"),
        (FieldRef("name").contains("AN"), [], "contains AN"),
        (FieldRef("name").contains("pp"), [1, 4], "name contains pp"),
      ]),
    itemFilterCheck(
      "filter.has-prefix-case-sensitive", "hasPrefix is case-sensitive, for non-ASCII letters too.",
      [
        (FieldRef("name").hasPrefix("a"), [1, 4], "hasPrefix a"),
        (FieldRef("name").hasPrefix("b"), [], "hasPrefix b"),
        (FieldRef("name").hasPrefix("É"), [7], "hasPrefix É"),
        (FieldRef("name").hasPrefix("é"), [], "hasPrefix é"),
      ]),
    itemFilterCheck(
      "filter.has-suffix-case-sensitive", "hasSuffix is case-sensitive.",
      [
        (FieldRef("name").hasSuffix("e"), [1, 4, 8], "hasSuffix e"),
        (FieldRef("name").hasSuffix("E"), [], "hasSuffix E"),
      ]),
    itemFilterCheck(
      "filter.wildcards-literal", "%, _ and * are ordinary characters in contains, hasPrefix and hasSuffix.",
      [
        (FieldRef("name").contains("%"), [5], "contains %"),
        (FieldRef("name").contains("_"), [5], "contains _"),
        (FieldRef("name").hasSuffix("*"), [5], "hasSuffix *"),
        (FieldRef("name").contains("1%f"), [], "contains 1%f"),
        (FieldRef("name").hasPrefix("%"), [], "hasPrefix %"),
        (FieldRef("name").hasPrefix("_"), [], "hasPrefix _"),
        (FieldRef("name").contains("a_p"), [], "contains a_p"),
        (FieldRef("name").hasSuffix("%"), [], "hasSuffix %"),
        (FieldRef("name").contains("*"), [5], "contains *"),
        (FieldRef("name").contains("ch*"), [], "contains ch*"),
      ]),
    itemFilterCheck(
      "filter.empty-pattern", "Every string, the empty one included, contains, starts and ends with \"\".",
      [
        (FieldRef("name").contains(""), [1, 2, 3, 4, 5, 6, 7, 8], "contains \"\""),
        (FieldRef("name").hasPrefix(""), [1, 2, 3, 4, 5, 6, 7, 8], "hasPrefix \"\""),
        (FieldRef("name") == "", [6], "name == \"\""),
      ]),
    ConformanceCheck(
      "filter.string-code-point-order",
      "String comparisons follow Unicode code points (binary UTF-8), not a collation."
    ) { context in
      let store = try await context.store(with: textCells)
      // Swift's String == and < use canonical equivalence; the expected ids use bytes instead.
      func before(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
      let cases: [(Filter, [Int64], String)] = [
        (FieldRef("text") > "Z", textCellIDs { before("Z", $0) }, "> Z"),
        (FieldRef("text") < "a", textCellIDs { before($0, "a") }, "< a"),
        (FieldRef("text") >= "e", textCellIDs { !before($0, "e") }, ">= e"),
        (FieldRef("text") <= "\u{C4}", textCellIDs { !before("\u{C4}", $0) }, "<= Ä"),
      ]
      for (filter, expected, what) in cases {
        try await expectIDs(store.query(Cell.self).filter(filter), expected, "ids where text \(what)")
      }
    },
    ConformanceCheck(
      "filter.unicode-forms-distinct",
      "Precomposed \"é\" and decomposed \"e\\u{301}\" are different values in filters."
    ) { context in
      let store = try await context.store(with: textCells)
      try await expectIDs(
        store.query(Cell.self).filter(FieldRef("text") == "\u{E9}"), [4], "text == precomposed é")
      try await expectIDs(
        store.query(Cell.self).filter(FieldRef("text") == "e\u{301}"), [7], "text == decomposed é")
      try await expectIDs(
        store.query(Cell.self).filter(FieldRef("text").hasPrefix("e")), [7], "text hasPrefix e")
      try await expectIDs(
        store.query(Cell.self).filter(FieldRef("text").contains("\u{301}")), [7], "contains U+0301")
    },
    ConformanceCheck(
      "filter.string-id-prefixes",
      "hasPrefix on a string id selects by prefix; the empty prefix selects every row, counted and sorted."
    ) { context in
      let tags = ["", "a", "ab", "b", "ba"].enumerated().map { Tag(id: $0.element, count: Int64($0.offset)) }
      let store = try await context.store(with: tags)
      let everything = store.query(Tag.self).filter(FieldRef("id").hasPrefix(""))
      try await expectIDs(everything, ["", "a", "ab", "b", "ba"], "ids with prefix \"\"")
      try await expectIDs(
        everything.sort(\.count, .descending).offset(1), ["b", "ab", "a", ""],
        "ids with prefix \"\", by count descending, offset 1")
      try expectEqual(
        try await everything.sort(\.count, .descending).offset(1).count(), 4,
        "count with prefix \"\", offset 1")
      try await expectIDs(
        store.query(Tag.self).filter(FieldRef("id").hasPrefix("a")), ["a", "ab"], "prefix a")
    },
  ]
}
