@_spi(Backend) import Coffer

extension ConformanceSuite {
  static let crudChecks: [ConformanceCheck] = [
    ConformanceCheck("crud.insert-then-get", "A value inserted is returned unchanged by get(id).") {
      context in
      let store = try await context.store(with: Item.sample)
      for item in Item.sample {
        try expectEqual(try await store.get(Item.self, id: item.id), item, "get(\(item.id))")
      }
    },
    ConformanceCheck("crud.get-missing-is-nil", "get(id) of an id that is not stored returns nil.") {
      context in
      let store = try await context.store(with: Item.sample)
      try expectEqual(try await store.get(Item.self, id: 99), nil, "get(99)")
    },
    ConformanceCheck("crud.update-replaces", "update replaces every field of the stored value.") { context in
      let store = try await context.store(with: Item.sample)
      let changed = Item(id: 3, name: "changed", rank: nil, score: 9, flag: false)
      try await store.update(changed)
      try expectEqual(try await store.get(Item.self, id: 3), changed, "get(3) after update")
      try expectEqual(try await store.query(Item.self).count(), Item.sample.count, "count after update")
    },
    ConformanceCheck("crud.upsert-inserts-new", "upsert of a new id inserts it.") { context in
      let store = try await context.store(with: Item.sample)
      let new = Item(id: 42, name: "new", rank: 1, score: nil, flag: true)
      try await store.upsert(new)
      try expectEqual(try await store.get(Item.self, id: 42), new, "get(42) after upsert")
      try expectEqual(try await store.query(Item.self).count(), Item.sample.count + 1, "count after upsert")
    },
    ConformanceCheck("crud.upsert-replaces-existing", "upsert of a stored id replaces the stored value.") {
      context in
      let store = try await context.store(with: Item.sample)
      let replacement = Item(id: 1, name: "replaced", rank: nil, score: nil, flag: false)
      try await store.upsert(replacement)
      try expectEqual(try await store.get(Item.self, id: 1), replacement, "get(1) after upsert")
      try expectEqual(try await store.query(Item.self).count(), Item.sample.count, "count after upsert")
    },
    ConformanceCheck(
      "crud.delete-removes", "delete removes the value with the id and nothing else, and says it removed one."
    ) {
      context in
      let store = try await context.store(with: Item.sample)
      try expectEqual(try await store.delete(Item.self, id: 4), true, "delete(4)'s answer")
      try expectEqual(try await store.get(Item.self, id: 4), nil, "get(4) after delete")
      try await expectIDs(store.query(Item.self), [1, 2, 3, 5, 6, 7, 8], "ids after delete")
    },
    ConformanceCheck(
      "crud.delete-missing-is-noop",
      "Deleting an id that is not stored succeeds, changes nothing and says it removed nothing."
    ) {
      context in
      let store = try await context.store(with: Item.sample)
      try expectEqual(try await store.delete(Item.self, id: 99), false, "delete(99)'s answer")
      try expectEqual(try await store.query(Item.self).count(), Item.sample.count, "count")
    },
    ConformanceCheck(
      "crud.delete-all-matching",
      "A filtered query's delete() removes exactly the matching values and returns how many."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let removed = try await store.query(Item.self).filter(FieldRef("flag") == true).delete()
      try expectEqual(removed, 4, "delete(flag == true) result")
      try await expectIDs(store.query(Item.self), [2, 4, 6, 8], "ids left")
    },
    ConformanceCheck("crud.delete-all", "delete() on an unfiltered query empties the entity.") { context in
      let store = try await context.store(with: Item.sample)
      try await store.insert(Tag(id: "kept", count: 1))
      try expectEqual(try await store.query(Item.self).delete(), Item.sample.count, "delete() result")
      try expectEqual(try await store.query(Item.self).count(), 0, "count after delete()")
      try expectEqual(try await store.query(Tag.self).count(), 1, "other entity's count")
    },
    ConformanceCheck(
      "crud.get-ids-in-order",
      "get(ids:) returns values in the order of the ids asked, skipping missing ones."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let values = try await store.get(Item.self, ids: [7, 99, 2, 5, 1000, 1])
      try expectEqual(values.map(\.id), [7, 2, 5, 1], "get(ids: [7, 99, 2, 5, 1000, 1])")
      try expectEqual(try await store.get(Item.self, ids: []).map(\.id), [], "get(ids: [])")
    },
    ConformanceCheck("crud.first", "first() is the first value in the query's order, or nil.") {
      context in
      let store = try await context.store(with: Item.sample)
      let top = try await store.query(Item.self).filter(FieldRef("rank") != nil).sort(\.rank, .descending)
        .first()
      try expectEqual(top?.id, 7, "first by rank descending")
      try expectEqual(
        try await store.query(Item.self).filter(FieldRef("name") == "none").first(), nil, "first of nothing")
    },
    ConformanceCheck("crud.count", "count() is the number of values the query selects.") { context in
      let store = try await context.store(with: Item.sample)
      try expectEqual(try await store.query(Item.self).count(), 8, "count()")
      try expectEqual(
        try await store.query(Item.self).filter(FieldRef("name") == "apple").count(), 2,
        "count(name == apple)")
      try expectEqual(
        try await store.query(Item.self).filter(FieldRef("rank") == nil).count(), 2, "count(rank == nil)")
    },
    ConformanceCheck("crud.all-ordered-by-id", "all() returns every value ordered by id ascending.") {
      context in
      let store = try await context.store(with: Item.sample.reversed())
      try expectEqual(try await store.all(Item.self), Item.sample, "all()")
    },
    ConformanceCheck(
      "crud.rows-in-schema-order",
      "fetchRows returns rows whose values follow the prepared schema's field order."
    ) { context in
      let store = try await context.store(with: [Item.sample[0]])
      let rows = try await store.fetchRows(Query(entity: "Item"))
      try expectEqual(rows, [Row([1, "apple", 3, 1.5, true])], "fetchRows(Item)")
    },
    ConformanceCheck("crud.entities-independent", "Entities are separate: the same id may exist in each.") {
      context in
      let store = try await context.store(with: Item.sample)
      try await store.insert(Account(id: 1, email: "a@example.com", name: "A"))
      try await store.delete(Account.self, id: 1)
      try expectEqual(
        try await store.get(Item.self, id: 1), Item.sample[0], "Item 1 after deleting Account 1")
      try expectEqual(try await store.query(Account.self).count(), 0, "Account count")
    },
    ConformanceCheck(
      "crud.prepare-again-keeps-data", "Preparing an entity again with the same schema changes nothing."
    ) {
      context in
      let store = try await context.store(with: Item.sample)
      let schema = try EntitySchema(for: Item.self)
      try await store.prepare(schemas: [schema])
      try await store.prepare([Item.self])
      try expectEqual(try await store.all(Item.self), Item.sample, "all() after preparing again")
    },
  ]
}
