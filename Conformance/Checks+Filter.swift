@_spi(Backend) import Coffer

/// Fails the check unless the filter selects exactly these ``Item`` ids, both in a fetch and in
/// a count.
func expectItems(_ store: Store, _ filter: Filter, _ expected: [Int64], _ what: String) async throws {
  try await expectIDs(store.query(Item.self).filter(filter), expected, "ids where \(what)")
  try expectEqual(
    try await store.query(Item.self).filter(filter).count(), expected.count, "count where \(what)")
}

/// A check over ``Item/sample`` that expects each filter to select exactly the listed ids.
func itemFilterCheck(_ id: String, _ rule: String, _ cases: [(Filter, [Int64], String)]) -> ConformanceCheck {
  ConformanceCheck(id, rule) { context in
    let store = try await context.store(with: Item.sample)
    for (filter, expected, what) in cases { try await expectItems(store, filter, expected, what) }
  }
}

extension ConformanceSuite {
  static let filterChecks: [ConformanceCheck] = [
    itemFilterCheck(
      "filter.equal", "== matches equal values only.",
      [
        (FieldRef("rank") == 3, [1, 4], "rank == 3"), (FieldRef("name") == "apple", [1, 4], "name == apple"),
      ]),
    itemFilterCheck(
      "filter.not-equal", "!= with a value matches other values but never null.",
      [(FieldRef("rank") != 3, [3, 5, 7, 8], "rank != 3")]),
    itemFilterCheck(
      "filter.less", "< matches smaller values, never null.",
      [(FieldRef("rank") < 3, [3, 5, 8], "rank < 3"), (FieldRef("score") < 0, [2, 7], "score < 0")]),
    itemFilterCheck(
      "filter.less-or-equal", "<= matches smaller or equal values, never null.",
      [(FieldRef("score") <= 0.0, [2, 4, 7], "score <= 0.0"), (FieldRef("rank") <= 1, [3, 8], "rank <= 1")]),
    itemFilterCheck(
      "filter.greater", "> matches larger values (infinity included), never null.",
      [(FieldRef("score") > 1.5, [5, 8], "score > 1.5"), (FieldRef("rank") > 3, [7], "rank > 3")]),
    itemFilterCheck(
      "filter.greater-or-equal", ">= matches larger or equal values, never null.",
      [(FieldRef("rank") >= 3, [1, 4, 7], "rank >= 3")]),
    itemFilterCheck(
      "filter.comparisons-never-match-null", "No comparison with a value matches a null field.",
      [
        (FieldRef("rank") > Int64.min, [1, 3, 4, 5, 7, 8], "rank > Int64.min"),
        (FieldRef("rank") < Int64.max, [1, 3, 4, 5, 7, 8], "rank < Int64.max"),
        (FieldRef("rank") != 0, [1, 3, 4, 5, 7, 8], "rank != 0"),
        (FieldRef("score") >= -Double.infinity, [1, 2, 4, 5, 7, 8], "score >= -infinity"),
      ]),
    itemFilterCheck(
      "filter.is-null", "== nil matches exactly the null fields.",
      [
        (FieldRef("rank") == nil, [2, 6], "rank == nil"), (FieldRef("score") == nil, [3, 6], "score == nil"),
      ]),
    itemFilterCheck(
      "filter.is-not-null", "!= nil matches exactly the non-null fields.",
      [(FieldRef("score") != nil, [1, 2, 4, 5, 7, 8], "score != nil")]),
    itemFilterCheck(
      "filter.in", "isIn matches values equal to one in the list.",
      [(FieldRef("rank").isIn([Int64(1), 5, 99]), [3, 7, 8], "rank in [1, 5, 99]")]),
    itemFilterCheck(
      "filter.in-empty", "isIn with an empty list matches nothing.",
      [
        (.isIn("rank", []), [], "rank in []"),
        (.not(.isIn("rank", [])), [1, 2, 3, 4, 5, 6, 7, 8], "not(rank in [])"),
      ]),
    itemFilterCheck(
      "filter.in-with-null", "isIn with null in the list also matches null fields.",
      [
        (.isIn("rank", [.null, 2]), [2, 5, 6], "rank in [null, 2]"),
        (.isIn("rank", [.null]), [2, 6], "rank in [null]"),
      ]),
    itemFilterCheck(
      "filter.and", "and matches rows matching every operand; an empty and matches all.",
      [
        (FieldRef("flag") == true && FieldRef("rank") >= 2, [1, 5, 7], "flag == true and rank >= 2"),
        (.and([]), [1, 2, 3, 4, 5, 6, 7, 8], "and([])"),
      ]),
    itemFilterCheck(
      "filter.or", "or matches rows matching any operand; an empty or matches none.",
      [
        (
          FieldRef("name") == "apple" || FieldRef("score") == nil, [1, 3, 4, 6],
          "name == apple or score == nil"
        ),
        (.or([]), [], "or([])"),
      ]),
    itemFilterCheck(
      "filter.not", "not matches exactly the rows its operand does not, nulls included.",
      [
        (!(FieldRef("rank") == 3), [2, 3, 5, 6, 7, 8], "not(rank == 3)"),
        (!(FieldRef("rank") > 1), [2, 3, 6, 8], "not(rank > 1)"),
      ]),
    itemFilterCheck(
      "filter.nested", "Nested and/or/not combine as in Boolean logic.",
      [
        (
          (FieldRef("rank") >= 3 && FieldRef("flag") == false) || !(FieldRef("score") != nil), [3, 4, 6],
          "(rank >= 3 and flag == false) or not(score != nil)"
        ),
        (
          .not(.or([.not(FieldRef("flag") == true), FieldRef("rank") < 3])), [1, 7],
          "not(not(flag) or rank < 3)"
        ),
      ]),
    ConformanceCheck(
      "filter.not-complements", "For any filter f, f and not(f) together match every row exactly once."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let filters: [Filter] = [
        FieldRef("rank") > 2, FieldRef("score") < 1, FieldRef("name").hasPrefix("a"),
        .isIn("rank", [.null, 1]),
        FieldRef("rank") == nil, FieldRef("rank") != 3, FieldRef("flag") == true && FieldRef("score") >= 0,
        FieldRef("rank") == 1 || FieldRef("score") == nil,
      ]
      for filter in filters {
        let yes = Set(try await ids(store.query(Item.self).filter(filter)))
        let no = Set(try await ids(store.query(Item.self).filter(.not(filter))))
        try expect(
          yes.isDisjoint(with: no) && yes.union(no) == Set(Item.sample.map(\.id)),
          "\(filter): f matched \(yes.sorted()), not(f) matched \(no.sorted()); together they must be every id once"
        )
      }
    },
    itemFilterCheck(
      "filter.bool", "Booleans compare by equality.",
      [
        (FieldRef("flag") == false, [2, 4, 6, 8], "flag == false"),
        (FieldRef("flag") != true, [2, 4, 6, 8], "flag != true"),
      ]),
    itemFilterCheck(
      "filter.doubles", "Doubles compare numerically: -0.0 equals 0.0, infinities are ordinary values.",
      [
        (FieldRef("score") == -0.0, [4], "score == -0.0"),
        (FieldRef("score") == Double.infinity, [5], "score == inf"),
        (FieldRef("score") < -1e308, [7], "score < -1e308"),
      ]),
    itemFilterCheck(
      "filter.id-field", "Filters on the id field work like on any other field.",
      [
        (FieldRef("id") == 5, [5], "id == 5"),
        (FieldRef("id").isIn([Int64(8), 2, 100]), [2, 8], "id in [8, 2, 100]"),
        (FieldRef("id") > 6, [7, 8], "id > 6"),
        (!(FieldRef("id") == 5), [1, 2, 3, 4, 6, 7, 8], "not(id == 5)"),
      ]),
    ConformanceCheck(
      "filter.deep-nesting",
      "Filters nesting and/or/not up to QueryValidator.maximumFilterDepth levels work; deeper ones are invalidQuery."
    ) { context in
      let store = try await context.store(with: Item.sample)
      for (depth, negateEvery) in [
        (60, 0), (QueryValidator.maximumFilterDepth, 7), (QueryValidator.maximumFilterDepth, 1),
      ] {
        let (filter, expected) = deepItemFilter(depth: depth, negateEvery: negateEvery)
        try await expectItems(store, filter, expected, "a filter \(depth) levels deep")
      }
      let sameKind = (1...QueryValidator.maximumFilterDepth).reduce(FieldRef("rank") == 3) { inner, level in
        level.isMultiple(of: 2)
          ? .and([inner, FieldRef("id") != 99]) : .and([FieldRef("flag") != nil, inner])
      }
      try await expectItems(store, sameKind, [1, 4], "and nested in and, the deepest allowed")
      let (tooDeep, _) = deepItemFilter(depth: QueryValidator.maximumFilterDepth + 1, negateEvery: 0)
      let what = "a filter \(QueryValidator.maximumFilterDepth + 1) levels deep"
      let error = try await expectThrows(.invalidQuery, "fetch with \(what)") {
        _ = try await store.query(Item.self).filter(tooDeep).fetch()
      }
      try expectEqual(error.entity, "Item", "error.entity")
      try await expectThrows(.invalidQuery, "count with \(what)") {
        _ = try await store.query(Item.self).filter(tooDeep).count()
      }
      try await expectThrows(.invalidQuery, "delete with \(what)") {
        _ = try await store.query(Item.self).filter(tooDeep).delete()
      }
      let (deleting, deleted) = deepItemFilter(depth: 60, negateEvery: 0)
      try expectEqual(
        try await store.query(Item.self).filter(deleting).delete(), deleted.count, "rows deleted")
      try await expectIDs(
        store.query(Item.self), Item.sample.map(\.id).filter { !deleted.contains($0) }, "ids after the delete"
      )
    },
  ]
}

/// A filter over ``Item/sample`` nesting `depth` levels of alternating and/or (every
/// `negateEvery`th level a not instead, when that is not 0), and the ids it selects, worked out
/// with sets rather than by any backend.
func deepItemFilter(depth: Int, negateEvery: Int) -> (Filter, [Int64]) {
  let every = Set(Item.sample.map(\.id))
  var filter: Filter = FieldRef("rank") == 3
  var selected: Set<Int64> = [1, 4]
  for level in 1...depth {
    let id = Int64(level * 5 % 8 + 1)
    if negateEvery > 0, level.isMultiple(of: negateEvery) {
      filter = .not(filter)
      selected = every.subtracting(selected)
    } else if level.isMultiple(of: 2) {
      filter =
        level.isMultiple(of: 4) ? .or([filter, FieldRef("id") == id]) : .or([FieldRef("id") == id, filter])
      selected.insert(id)
    } else {
      filter = .and([FieldRef("id") != id, filter])
      selected.remove(id)
    }
  }
  return (filter, selected.sorted())
}
