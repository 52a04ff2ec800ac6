@_spi(Backend) import Coffer

/// Checks that the spans whose two fields compare as `filter` says are `expected`, by fetch,
/// count and exists.
func expectSpans(_ store: Store, _ filter: Filter, _ expected: [Int64], _ what: String) async throws {
  let query = store.query(Span.self).filter(filter)
  try await expectIDs(query, expected, "ids where \(what)")
  try expectEqual(try await query.count(), expected.count, "count where \(what)")
  try expectEqual(try await query.exists(), !expected.isEmpty, "exists where \(what)")
}

extension ConformanceSuite {
  static let fieldCompareChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "filter.fields-compare-integers",
      "Two integer fields of one row compare with every operator; a null on either side never matches."
    ) { context in
      let store = try await context.store(with: Span.sample)
      let (end, start) = (FieldRef("end"), FieldRef("start"))
      try await expectSpans(store, end > start, [1, 5], "end > start")
      try await expectSpans(store, end >= start, [1, 2, 5], "end >= start")
      try await expectSpans(store, end < start, [4], "end < start")
      try await expectSpans(store, end <= start, [2, 4], "end <= start")
      try await expectSpans(store, end.equals(start), [2], "end == start")
      try await expectSpans(store, end.differs(from: start), [1, 4, 5], "end != start")
      try await expectSpans(store, start.equals(FieldRef("id")), [1], "start == id")
    },
    ConformanceCheck(
      "filter.fields-compare-dates-strings",
      "Date fields compare chronologically and string fields by code point, field against field."
    ) { context in
      let store = try await context.store(with: Span.sample)
      try await expectSpans(store, FieldRef("edited") > FieldRef("opened"), [1, 5], "edited > opened")
      try await expectSpans(store, FieldRef("edited").equals(FieldRef("opened")), [4], "edited == opened")
      try await expectSpans(store, FieldRef("edited") < FieldRef("opened"), [2], "edited < opened")
      try await expectSpans(store, FieldRef("title") < FieldRef("note"), [4, 5], "title < note")
      try await expectSpans(store, FieldRef("title").equals(FieldRef("note")), [2], "title == note")
      try await expectSpans(store, FieldRef("title") > FieldRef("note"), [1], "title > note")
    },
    ConformanceCheck(
      "filter.fields-compare-negation",
      "not(_:) of a field comparison matches exactly the other rows, those with a null included."
    ) { context in
      let store = try await context.store(with: Span.sample)
      try await expectSpans(store, !(FieldRef("end") > FieldRef("start")), [2, 3, 4], "not(end > start)")
      try await expectSpans(
        store, !FieldRef("note").equals(FieldRef("title")), [1, 3, 4, 5], "not(note == title)")
      try await expectSpans(
        store, FieldRef("end") > FieldRef("start") || FieldRef("end") == nil, [1, 3, 5],
        "end > start or end null")
      try await expectSpans(
        store, FieldRef("end") >= FieldRef("start") && FieldRef("title") != "a", [2, 5],
        "end >= start and title != a")
    },
    ConformanceCheck(
      "filter.fields-compare-key-paths",
      "Key paths compare two properties (\\.edited > \\.opened), optional and not, in queries and deletes."
    ) { context in
      let store = try await context.store(with: Span.sample)
      try await expectIDs(store.query(Span.self).filter(\.end > \.start), [1, 5], "ids where end > start")
      try await expectIDs(store.query(Span.self).filter(\.start < \.end), [1, 5], "ids where start < end")
      try await expectIDs(
        store.query(Span.self).filter(\.edited <= \.opened), [2, 4], "ids where edited <= opened")
      try await expectIDs(
        store.query(Span.self).filter(\.title != \.note), [1, 4, 5], "ids where title != note")
      try await expectIDs(
        store.query(Span.self).filter(\.end == \.start).sort(\.id, .descending), [2], "ids where end == start"
      )
      try expectEqual(
        try await store.query(Span.self).filter(\.end < \.start).delete(), 1, "deleted end < start")
      try await expectIDs(store.query(Span.self), [1, 2, 3, 5], "ids left")
    },
    ConformanceCheck(
      "filter.fields-compare-needs-same-kind",
      "Comparing fields of different kinds (integer and double included), or an unknown field, is refused."
    ) { context in
      let store = try await context.store(with: Span.sample)
      for (filter, what) in [
        (FieldRef("title") > FieldRef("start"), "a string with an integer"),
        (FieldRef("opened").equals(FieldRef("start")), "a date with an integer"),
        (FieldRef("start") < FieldRef("nope"), "a field with an unknown one"),
      ] {
        _ = try await expectThrows(.invalidQuery, "comparing \(what)") {
          try await store.query(Span.self).filter(filter).fetch()
        }
      }
      let items = try await context.store(with: [Item(id: 1, name: "a", rank: 1, score: 1, flag: true)])
      _ = try await expectThrows(.invalidQuery, "comparing an integer with a double") {
        try await items.query(Item.self).filter(FieldRef("rank") < FieldRef("score")).fetch()
      }
    },
  ]
}
