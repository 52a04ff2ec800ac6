@_spi(Backend) import Coffer
import Foundation

/// A record holding a double, to check that NaN is rejected.
struct Measurement: Storable, Equatable {
  var id: Int64
  var reading: Double
}

extension ConformanceSuite {
  static let errorChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "errors.duplicate-insert", "Inserting a stored id fails with duplicateID naming entity and id."
    ) {
      context in
      let store = try await context.store(with: Item.sample)
      let error = try await expectThrows(.duplicateID, "insert of Item 3 again") {
        try await store.insert(Item(id: 3, name: "again", rank: nil, score: nil, flag: true))
      }
      try expectEqual(error.entity, "Item", "error.entity")
      try expectEqual(error.id, "3", "error.id")
      try expectEqual(try await store.get(Item.self, id: 3), Item.sample[2], "Item 3 after the failed insert")
    },
    ConformanceCheck(
      "errors.update-missing", "Updating an id that is not stored fails with notFound naming entity and id."
    ) { context in
      let store = try await context.store(with: [Tag(id: "here", count: 1)])
      let error = try await expectThrows(.notFound, "update of Tag \"gone\"") {
        try await store.update(Tag(id: "gone", count: 2))
      }
      try expectEqual(error.entity, "Tag", "error.entity")
      try expect(
        error.id?.contains("gone") == true, "error.id: expected it to name gone, got \(show(error.id))")
      try expectEqual(try await store.query(Tag.self).count(), 1, "count after the failed update")
    },
    ConformanceCheck(
      "errors.unique-violation",
      "Breaking a unique index by insert, update or upsert fails with uniqueViolation."
    ) { context in
      let accounts = [Account(id: 1, email: "a@x", name: "A"), Account(id: 2, email: "b@x", name: "B")]
      let store = try await context.store(with: accounts)
      try await expectThrows(.uniqueViolation, "insert with a taken email") {
        try await store.insert(Account(id: 3, email: "a@x", name: "C"))
      }
      try await expectThrows(.uniqueViolation, "update to a taken email") {
        try await store.update(Account(id: 2, email: "a@x", name: "B"))
      }
      try await expectThrows(.uniqueViolation, "upsert to a taken email") {
        try await store.upsert(Account(id: 1, email: "b@x", name: "A"))
      }
      try expectEqual(try await store.all(Account.self), accounts, "accounts after the failed changes")
      try await store.update(Account(id: 1, email: "a@x", name: "renamed"))
    },
    ConformanceCheck(
      "errors.unique-ignores-nulls", "Nulls are exempt from unique indexes: many rows may hold null."
    ) {
      context in
      let store = try await context.store(with: [
        Account(id: 1, email: nil, name: "A"), Account(id: 2, email: nil, name: "B"),
      ])
      try await store.insert(Account(id: 3, email: nil, name: "C"))
      try await store.update(Account(id: 1, email: "a@x", name: "A"))
      try await store.update(Account(id: 1, email: nil, name: "A"))
      try expectEqual(
        try await store.query(Account.self).filter(FieldRef("email") == nil).count(), 3, "count(email == nil)"
      )
    },
    ConformanceCheck(
      "errors.nan-rejected", "A NaN double is rejected with invalidValue naming the field; nothing is stored."
    ) {
      context in
      let store = try await context.store(with: [Measurement]())
      let error = try await expectThrows(.invalidValue, "insert of a NaN reading") {
        try await store.insert(Measurement(id: 1, reading: .nan))
      }
      try expectEqual(error.field, "reading", "error.field")
      try expectEqual(try await store.query(Measurement.self).count(), 0, "count after the rejected insert")
    },
    ConformanceCheck(
      "errors.nan-date-rejected",
      "A date whose time is NaN is rejected: invalidValue naming the field when inserted or updated, "
        + "invalidQuery in a filter; nothing changes."
    ) {
      context in
      let store = try await context.store(with: Span.sample)
      let nan = Date(timeIntervalSince1970: .nan)
      var inserted = Span.sample[0]
      inserted.id = 10
      inserted.opened = nan
      let error = try await expectThrows(.invalidValue, "insert of a span opened at a NaN date") {
        try await store.insert(inserted)
      }
      try expectEqual(error.field, "opened", "error.field of the insert")
      var updated = Span.sample[1]
      updated.edited = nan
      let updateError = try await expectThrows(.invalidValue, "update of span 2 to a NaN edit date") {
        try await store.update(updated)
      }
      try expectEqual(updateError.field, "edited", "error.field of the update")
      let queryError = try await expectThrows(.invalidQuery, "filter opened == a NaN date") {
        try await store.query(Span.self).filter(FieldRef("opened") == nan).fetch()
      }
      try expectEqual(queryError.field, "opened", "error.field of the query")
      try expectEqual(try await store.query(Span.self).count(), Span.sample.count, "count after the refusals")
      try expectEqual(
        try await store.get(Span.self, id: 2), Span.sample[1], "span 2 after the refused update")
    },
    ConformanceCheck(
      "errors.uint64-out-of-range", "A UInt64 above Int64.max is rejected with valueOutOfRange."
    ) {
      context in
      let store = try await context.store(with: [Counter(id: 1, big: UInt64(Int64.max))])
      try expectEqual(
        try await store.get(Counter.self, id: 1)?.big, UInt64(Int64.max), "UInt64(Int64.max) read back")
      let error = try await expectThrows(.valueOutOfRange, "insert of UInt64(Int64.max) + 1") {
        try await store.insert(Counter(id: 2, big: UInt64(Int64.max) + 1))
      }
      try expectEqual(error.field, "big", "error.field")
      try expectEqual(try await store.query(Counter.self).count(), 1, "count after the rejected insert")
    },
    ConformanceCheck(
      "errors.unknown-field-in-query", "A query naming an unknown field fails with invalidQuery naming it."
    ) {
      context in
      let store = try await context.store(with: Item.sample)
      let error = try await expectThrows(.invalidQuery, "filter on 'colour'") {
        try await store.query(Item.self).filter(FieldRef("colour") == "red").fetch()
      }
      try expectEqual(error.field, "colour", "error.field")
      try await expectThrows(.invalidQuery, "sort by 'colour'") {
        try await store.query(Item.self).sort([Sort("colour")]).fetch()
      }
      try await expectThrows(.invalidQuery, "count on 'colour'") {
        try await store.query(Item.self).filter(FieldRef("colour") == nil).count()
      }
    },
    ConformanceCheck(
      "errors.wrong-kind-comparison",
      "Comparing a field with a value of another kind fails with invalidQuery."
    ) { context in
      let store = try await context.store(with: Item.sample)
      try await expectThrows(.invalidQuery, "rank == \"3\"") {
        try await store.query(Item.self).filter(FieldRef("rank") == "3").fetch()
      }
      try await expectThrows(.invalidQuery, "name < 3") {
        try await store.query(Item.self).filter(FieldRef("name") < 3).fetch()
      }
      try await expectThrows(.invalidQuery, "rank hasPrefix \"3\"") {
        try await store.query(Item.self).filter(FieldRef("rank").hasPrefix("3")).fetch()
      }
    },
    ConformanceCheck(
      "errors.unknown-entity", "The row API refuses an entity that was never prepared with unknownEntity."
    ) {
      context in
      let store = try await context.store()
      try await expectThrows(.unknownEntity, "fetchRows(Nowhere)") {
        try await store.fetchRows(Query(entity: "Nowhere"))
      }
      try await expectThrows(.unknownEntity, "apply(insert into Nowhere)") {
        try await store.apply(ChangeSet([.insert(entity: "Nowhere", row: Row([1]))]))
      }
    },
    ConformanceCheck("errors.closed-store", "A closed store refuses reads and writes with closed.") {
      context in
      let store = try await context.store(with: Item.sample)
      try await store.close()
      try await expectThrows(.closed, "get after close") { try await store.get(Item.self, id: 1) }
      try await expectThrows(.closed, "fetch after close") { try await store.all(Item.self) }
      try await expectThrows(.closed, "insert after close") {
        try await store.insert(Item(id: 100, name: "late", rank: nil, score: nil, flag: true))
      }
      try await store.close()
    },
    ConformanceCheck(
      "errors.id-value-is-the-stored-id",
      "A duplicate, missing or unique-breaking record's error carries its id as the stored value, equal to "
        + "the id the program used, for Int64, String and UUID ids."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let long = String(repeating: "n", count: 300)
      let token = UUID()
      try await store.insert(Tag(id: long, count: 1))
      try await store.insert(Token(id: token, count: 1))
      try await store.insert(Account(id: 1, email: "a@x", name: "A"))
      let duplicate = try await expectThrows(.duplicateID, "insert of stored Item 3") {
        try await store.insert(Item(id: 3, name: "dup", rank: nil, score: nil, flag: true))
      }
      try expectEqual(duplicate.idValue, .int(3), "duplicateID idValue")
      let missing = try await expectThrows(.notFound, "update of a missing Tag") {
        try await store.update(Tag(id: long + "!", count: 2))
      }
      try expectEqual(missing.idValue, .string(long + "!"), "notFound idValue")
      let twice = try await expectThrows(.duplicateID, "insert of a stored Token") {
        try await store.insert(Token(id: token, count: 2))
      }
      try expectEqual(twice.idValue, .uuid(token), "duplicateID idValue of a UUID id")
      let clash = try await expectThrows(.uniqueViolation, "a second account with the same email") {
        try await store.insert(Account(id: 2, email: "a@x", name: "B"))
      }
      try expectEqual(clash.idValue, .int(2), "uniqueViolation idValue")
    },
  ]
}
