@_spi(Backend) import Coffer
import Foundation

/// Reads every keyset page of a query, checking that only the last one has no next cursor.
func walkKeysetPages<T: Storable>(_ query: StoreQuery<T>, size: Int, _ what: String) async throws -> [T.ID] {
  var page = try await query.page(after: nil, size: size)
  var read = page.items.map(\.id)
  var pages = 1
  while let next = page.next {
    try expect(
      page.items.count == size,
      "\(what): page \(pages) has a next cursor but \(page.items.count) of \(size) values")
    page = try await query.page(after: next, size: size)
    read += page.items.map(\.id)
    pages += 1
    try expect(pages < 1_000, "\(what): more than 1000 pages")
  }
  return read
}

extension ConformanceSuite {
  static let pageChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "pages.numbered-with-total",
      "page(size:number:) partitions the result and reports its total and page count, even under ties."
    ) { context in
      let store = try await context.store(with: tiedItems)
      let query = store.query(Item.self).filter(\.flag == true).sort(\.rank, .descending).sort(\.name)
      let whole = try await ids(query)
      try expectEqual(whole.count, 11, "flagged items")
      for size in [1, 4, 5, 11, 30] {
        let pageCount = (whole.count + size - 1) / size
        var paged: [Int64] = []
        for number in 1...(pageCount + 1) {
          let page = try await query.page(size: size, number: number)
          let what = "page \(number) of size \(size)"
          try expectEqual(page.total, whole.count, "\(what): total")
          try expectEqual(page.pageCount, pageCount, "\(what): page count")
          try expectEqual(page.hasNextPage, number < pageCount, "\(what): has a next page")
          try expectEqual(page.number, number, "\(what): number")
          paged += page.items.map(\.id)
        }
        try expectEqual(paged, whole, "ids read in numbered pages of \(size)")
      }
    },
    ConformanceCheck(
      "pages.numbered-replace-slice",
      "A numbered page replaces the query's offset and limit; an empty result has 0 pages."
    ) { context in
      let store = try await context.store(with: tiedItems)
      let query = store.query(Item.self).sort(\.name, .descending)
      let whole = try await ids(query)
      let page = try await query.offset(3).limit(2).page(size: 4, number: 2)
      try expectEqual(page.items.map(\.id), Array(whole[4..<8]), "ids of page 2 of size 4")
      try expectEqual(page.total, 23, "total")
      let none = try await query.filter(\.name == "nobody").page(size: 5, number: 1)
      try expectEqual(none.items.map(\.id), [], "ids of an empty result")
      try expectEqual(none.total, 0, "total of an empty result")
      try expectEqual(none.pageCount, 0, "page count of an empty result")
      try expectEqual(none.hasNextPage, false, "an empty result has a next page")
    },
    ConformanceCheck(
      "pages.invalid-size-or-number", "A page size or number below 1 is refused as an invalid query."
    ) { context in
      let store = try await context.store(with: Item.sample)
      _ = try await expectThrows(.invalidQuery, "page size 0") {
        try await store.query(Item.self).page(size: 0, number: 1).total
      }
      _ = try await expectThrows(.invalidQuery, "page number 0") {
        try await store.query(Item.self).page(size: 5, number: 0).total
      }
      _ = try await expectThrows(.invalidQuery, "keyset page size 0") {
        try await store.query(Item.self).page(after: nil, size: 0).items.count
      }
    },
    ConformanceCheck(
      "pages.keyset-walks-all",
      "Keyset pages read one after another return the query's result exactly, nulls and ties included."
    ) { context in
      let store = try await context.store(with: tiedItems)
      let queries: [(StoreQuery<Item>, String)] = [
        (store.query(Item.self), "id order"),
        (store.query(Item.self).sort(\.rank), "rank ascending"),
        (store.query(Item.self).sort(\.rank, .descending).sort(\.name), "rank descending, name"),
        (
          store.query(Item.self).filter(\.flag == false).sort(\.name, .descending).sort(\.id, .descending),
          "name, id descending"
        ),
      ]
      for (query, what) in queries {
        let whole = try await ids(query)
        for size in [1, 4, 23, 30] {
          let paged = try await walkKeysetPages(query.offset(2).limit(3), size: size, "\(what), size \(size)")
          try expectEqual(paged, whole, "ids read in keyset pages of \(size), \(what)")
        }
      }
    },
    ConformanceCheck(
      "pages.keyset-stable-under-changes",
      "Rows inserted or deleted before a keyset cursor shift nothing; those after it are read."
    ) { context in
      let store = try await context.store(with: tiedItems)
      let query = store.query(Item.self).sort(\.rank)
      let first = try await query.page(after: nil, size: 6)
      try expectEqual(first.items.map(\.id), [5, 10, 15, 20, 3, 6], "ids of the first page")
      guard let cursor = first.next else { throw CheckFailure("The first page of 23 has no next cursor.") }
      try await store.insert(Item(id: 100, name: "before", rank: nil, score: nil, flag: true))
      try await store.insert(Item(id: 101, name: "tied after", rank: 0, score: nil, flag: true))
      try await store.insert(Item(id: 102, name: "after", rank: 2, score: nil, flag: true))
      try await store.delete(Item.self, id: 3)
      try await store.delete(Item.self, id: 9)
      let whole = try await ids(query)
      guard let six = whole.firstIndex(of: 6) else { throw CheckFailure("Item 6 is missing.") }
      var rest: [Int64] = []
      var page = try await query.page(after: cursor, size: 5)
      rest += page.items.map(\.id)
      while let next = page.next {
        page = try await query.page(after: next, size: 5)
        rest += page.items.map(\.id)
      }
      try expectEqual(rest, Array(whole[(six + 1)...]), "ids read after the cursor")
      try expect(rest.contains(101) && rest.contains(102), "the rows inserted after the cursor are read")
      try expect(
        !rest.contains(100) && !rest.contains(9), "the row inserted before is skipped, the deleted one gone")
    },
    ConformanceCheck(
      "pages.keyset-cursor-after-value",
      "cursor(after:) of a value starts the next page right after it, whether or not it is stored."
    ) { context in
      let store = try await context.store(with: tiedItems)
      let query = store.query(Item.self).sort(\.rank, .descending).sort(\.name)
      let values = try await query.fetch()
      let after = try await query.page(after: try await query.cursor(after: values[4]), size: 100)
      try expectEqual(after.items.map(\.id), values[5...].map(\.id), "ids after the fifth value")
      try expectEqual(after.next, nil, "next cursor of the last page")
      let absent = Item(id: 0, name: "n2", rank: 1, score: nil, flag: true)
      let following = try await query.page(after: try await query.cursor(after: absent), size: 100)
      let expected = values.filter { ($0.rank ?? -1) < 1 || ($0.rank == 1 && $0.name >= "n2") }.map(\.id)
      try expectEqual(following.items.map(\.id), expected, "ids after an unstored value")
    },
    ConformanceCheck(
      "pages.keyset-cursor-checked",
      "A keyset cursor made for another order is refused; one encoded and decoded again still works."
    ) { context in
      let store = try await context.store(with: tiedItems)
      let byRank = store.query(Item.self).sort(\.rank)
      let page = try await byRank.page(after: nil, size: 5)
      guard let cursor = page.next else { throw CheckFailure("The first page of 23 has no next cursor.") }
      _ = try await expectThrows(.invalidQuery, "a rank cursor on a name order") {
        try await store.query(Item.self).sort(\.name).page(after: cursor, size: 5).items.count
      }
      _ = try await expectThrows(.invalidQuery, "a rank cursor on a descending rank order") {
        try await store.query(Item.self).sort(\.rank, .descending).page(after: cursor, size: 5).items.count
      }
      let decoded = try JSONDecoder().decode(PageCursor.self, from: try JSONEncoder().encode(cursor))
      try expectEqual(decoded, cursor, "a cursor after JSON")
      try expectEqual(
        try await byRank.page(after: decoded, size: 5).items.map(\.id),
        try await byRank.page(after: cursor, size: 5).items.map(\.id), "ids after a decoded cursor")
    },
  ]
}
