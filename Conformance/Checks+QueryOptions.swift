@_spi(Backend) import Coffer

extension ConformanceSuite {
  static let existsChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "exists.matches-filter",
      "exists() is true exactly when the query selects a value, for every kind of filter."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let cases: [(Filter, Bool, String)] = [
        (.all, true, "all"),
        (FieldRef("name") == "apple", true, "name == apple"),
        (FieldRef("name") == "kiwi", false, "name == kiwi"),
        (FieldRef("rank") == nil, true, "rank == nil"),
        (FieldRef("name").contains("cLA", ignoringCase: true), true, "name contains cLA ignoring case"),
        (FieldRef("name").contains("cla"), false, "name contains cla"),
        (.or([]), false, "or()"),
      ]
      for (filter, expected, what) in cases {
        try expectEqual(
          try await store.query(Item.self).filter(filter).exists(), expected, "exists where \(what)")
      }
      let empty = try await context.store()
      try expectEqual(try await empty.query(Item.self).exists(), false, "exists in an empty store")
    },
    ConformanceCheck(
      "exists.honours-slice",
      "exists() honours the query's offset and limit, and follows inserts and deletes."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let query = store.query(Item.self)
      try expectEqual(try await query.offset(7).exists(), true, "exists with offset 7 of 8")
      try expectEqual(try await query.offset(8).exists(), false, "exists with offset 8 of 8")
      try expectEqual(try await query.limit(0).exists(), false, "exists with limit 0")
      try expectEqual(
        try await query.filter(\.flag == true).sort(\.score, .descending).offset(3).exists(), true,
        "exists with offset 3 of 4 flagged")
      try expectEqual(
        try await query.filter(\.flag == true).offset(4).exists(), false, "exists with offset 4 of 4 flagged")
      let kiwi = query.filter(\.name == "kiwi")
      try await store.insert(Item(id: 9, name: "kiwi", rank: nil, score: nil, flag: false))
      try expectEqual(try await kiwi.exists(), true, "exists after inserting a kiwi")
      try await kiwi.delete()
      try expectEqual(try await kiwi.exists(), false, "exists after deleting the kiwi")
    },
    ConformanceCheck(
      "exists.rows-api", "Store.hasRows answers exists() for an untyped query, slice included."
    ) { context in
      let store = try await context.store(with: Item.sample)
      try expectEqual(
        try await store.hasRows(Query(entity: "Item", filter: FieldRef("rank") == nil)), true,
        "rows with null rank")
      try expectEqual(
        try await store.hasRows(Query(entity: "Item", filter: FieldRef("rank") == 99)), false,
        "rows with rank 99")
      try expectEqual(try await store.hasRows(Query(entity: "Item", offset: 8)), false, "rows past offset 8")
      _ = try await expectThrows(.invalidQuery, "hasRows with an unknown field") {
        try await store.hasRows(Query(entity: "Item", filter: FieldRef("nope") == 1))
      }
    },
  ]

  static let selectChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "select.fields-only",
      "select returns the chosen fields of every value the query selects, in its order, nulls included."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let query = store.query(Item.self).sort(\.score, .descending)
      let values = try await query.fetch()
      let rows = try await query.select(\.name, \.id, \.rank, \.score).fetch()
      try expectEqual(rows.count, values.count, "selected rows")
      for (row, value) in zip(rows, values) {
        try expectEqual(row.fields, ["name", "id", "rank", "score"], "selected fields")
        try expectEqual(try row.value(\.id), value.id, "id")
        try expectEqual(try row.value(\.name), value.name, "name of \(value.id)")
        try expectEqual(try row.value(\.rank), value.rank, "rank of \(value.id)")
        try expectEqual(try row.value(\.score), value.score, "score of \(value.id)")
        try expectEqual(row["name"], .string(value.name), "stored name of \(value.id)")
        try expectEqual(row["flag"], nil, "stored flag, not selected, of \(value.id)")
      }
    },
    ConformanceCheck(
      "select.slice-and-first",
      "select honours filter, offset and limit; first() is nil when nothing matches."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let query = store.query(Item.self).filter(\.flag == true).sort(\.name).offset(1).limit(2)
      let rows = try await query.select(\.id).fetch()
      try expectEqual(
        try rows.map { try $0.value(\.id) }, [1, 3], "ids of flagged items by name, offset 1, limit 2")
      let first = try await query.select(\.name).first()
      try expectEqual(try first?.value(\.name), "apple", "name of the first")
      let none = try await store.query(Item.self).filter(\.name == "kiwi").select(\.name).first()
      try expectEqual(none, nil, "first of no match")
    },
    ConformanceCheck(
      "select.unselected-and-unknown",
      "Reading a field that was not selected, or selecting an unknown field, is an invalid query."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let rows = try await store.query(Item.self).select(\.name).fetch()
      guard let row = rows.first else { throw CheckFailure("select(\\.name) returned no rows.") }
      _ = try await expectThrows(.invalidQuery, "reading flag when only name was selected") {
        try row.value(\.flag)
      }
      _ = try await expectThrows(.invalidQuery, "selecting an unknown field") {
        try await store.query(Item.self).select(fields: ["name", "nope"]).fetch()
      }
      _ = try await expectThrows(.invalidQuery, "fetchValues with an unknown field") {
        try await store.fetchValues(Query(entity: "Item"), fields: ["nope"])
      }
    },
    ConformanceCheck(
      "select.rows-api", "Store.fetchValues returns the chosen fields of each row, in the order asked."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let rows = try await store.fetchValues(
        Query(entity: "Item", filter: FieldRef("flag") == true, sort: [Sort("name")], limit: 3),
        fields: ["id", "name"])
      try expectEqual(
        rows.map(\.values),
        [[.int(5), .string("100%_off*")], [.int(1), .string("apple")], [.int(3), .string("cherry")]],
        "id and name of the first three flagged items by name")
    },
  ]
}
