@_spi(Backend) import Coffer

/// 23 items whose ranks tie in groups of up to five, some null, inserted out of id order.
let tiedItems: [Item] = (1...23).reversed().map { id in
  Item(
    id: Int64(id), name: "n\(id % 4)", rank: id % 5 == 0 ? nil : Int64(id % 3), score: nil,
    flag: id.isMultiple(of: 2))
}

extension ConformanceSuite {
  static let pagingChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "paging.pages-partition-under-ties",
      "limit/offset pages never overlap or skip rows, even when sort keys tie."
    ) { context in
      let store = try await context.store(with: tiedItems)
      let query = store.query(Item.self).sort(\.rank, .descending).sort(\.name)
      let whole = try await ids(query)
      for size in [1, 3, 4, 7] {
        var paged: [Int64] = []
        var offset = 0
        while offset < tiedItems.count + size {
          paged += try await ids(query.offset(offset).limit(size))
          offset += size
        }
        try expectEqual(paged, whole, "ids read in pages of \(size)")
      }
      try expectEqual(Set(whole).count, tiedItems.count, "distinct ids in the whole result")
    },
    ConformanceCheck(
      "paging.offset-beyond-end", "An offset at or past the end gives no rows and a count of 0."
    ) {
      context in
      let store = try await context.store(with: Item.sample)
      try await expectIDs(store.query(Item.self).offset(8), [], "offset 8 of 8")
      try await expectIDs(store.query(Item.self).offset(100).limit(5), [], "offset 100")
      try expectEqual(try await store.query(Item.self).offset(100).count(), 0, "count with offset 100")
    },
    ConformanceCheck("paging.limit-zero", "A limit of 0 gives no rows and a count of 0.") { context in
      let store = try await context.store(with: Item.sample)
      try await expectIDs(store.query(Item.self).limit(0), [], "limit 0")
      try expectEqual(try await store.query(Item.self).limit(0).count(), 0, "count with limit 0")
    },
    ConformanceCheck(
      "paging.limit-offset-slice", "offset skips rows of the ordered result, then limit caps it."
    ) {
      context in
      let store = try await context.store(with: Item.sample)
      let query = store.query(Item.self).sort(\.score, .descending)
      try await expectIDs(query.offset(2).limit(3), [1, 4, 2], "score desc, offset 2, limit 3")
      try await expectIDs(query.offset(6), [3, 6], "score desc, offset 6")
      try await expectIDs(query.limit(100), [5, 8, 1, 4, 2, 7, 3, 6], "score desc, limit 100")
    },
    ConformanceCheck("paging.count-honours-slice", "count honours the filter, offset and limit.") { context in
      let store = try await context.store(with: Item.sample)
      let query = store.query(Item.self).filter(FieldRef("rank") != nil)
      try expectEqual(try await query.count(), 6, "count(rank != nil)")
      try expectEqual(try await query.offset(2).count(), 4, "count with offset 2")
      try expectEqual(try await query.limit(4).count(), 4, "count with limit 4")
      try expectEqual(try await query.offset(4).limit(5).count(), 2, "count with offset 4, limit 5")
    },
    ConformanceCheck(
      "paging.stream-reads-all-once", "stream(pageSize:) yields every value once, in the query's order."
    ) { context in
      let store = try await context.store(with: tiedItems)
      let query = store.query(Item.self).sort(\.rank)
      let whole = try await ids(query)
      for size in [1, 5, 23, 50] {
        var streamed: [Int64] = []
        for try await item in query.stream(pageSize: size) { streamed.append(item.id) }
        try expectEqual(streamed, whole, "ids streamed in pages of \(size)")
      }
    },
    ConformanceCheck(
      "paging.stream-keeps-its-place",
      "A stream yields each value that stays exactly once, in order, while values are inserted before its "
        + "position and values it already read are deleted: pages start after the last value read, not at a count."
    ) { context in
      let store = try await context.store(with: tiedItems)
      // Each order with the rank of a value that sorts before every stored one in it.
      let orders: [(String, StoreQuery<Item>, Int64?)] = [
        ("rank descending, name", store.query(Item.self).sort(\.rank, .descending).sort(\.name), .max),
        ("rank, name", store.query(Item.self).sort(\.rank).sort(\.name), nil),
      ]
      var nextID: Int64 = 1000
      for (name, query, firstRank) in orders {
        let whole = try await ids(query)
        var streamed: [Int64] = []
        for try await item in query.stream(pageSize: 3) {
          // Deletes the value read before this one, and inserts one before the stream's position.
          if let previous = streamed.last { try await store.delete(Item.self, id: previous) }
          streamed.append(item.id)
          nextID += 1
          try await store.insert(Item(id: nextID, name: "", rank: firstRank, score: nil, flag: false))
        }
        try expectEqual(
          streamed, whole, "ids streamed by \(name) while values were inserted before and deleted")
        try await store.query(Item.self).filter(\.id >= 1000).delete()
        for item in tiedItems { try await store.upsert(item) }
      }
    },
    ConformanceCheck(
      "paging.stream-honours-slice", "stream(pageSize:) honours the query's own offset and limit."
    ) {
      context in
      let store = try await context.store(with: tiedItems)
      let query = store.query(Item.self).sort(\.name, .descending).offset(3).limit(11)
      var streamed: [Int64] = []
      for try await item in query.stream(pageSize: 4) { streamed.append(item.id) }
      try expectEqual(streamed, try await ids(query), "ids streamed with offset 3, limit 11")
    },
    ConformanceCheck(
      "paging.extreme-offset-and-limit",
      "Offsets and limits up to Int.max never crash: offset 1 with limit Int.max skips one row, a huge offset gives none."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let all = store.query(Item.self)
      try await expectIDs(all.offset(1).limit(.max), [2, 3, 4, 5, 6, 7, 8], "offset 1, limit Int.max")
      try expectEqual(try await all.offset(1).limit(.max).count(), 7, "count with offset 1, limit Int.max")
      let byScore = all.sort(\.score, .descending)
      try await expectIDs(
        byScore.offset(1).limit(.max), [8, 1, 4, 2, 7, 3, 6], "score desc, offset 1, limit Int.max")
      let byName = all.sort(\.name)
      try await expectIDs(
        byName.offset(1).limit(.max), [5, 2, 1, 4, 3, 8, 7], "name asc, offset 1, limit Int.max")
      let ranked = all.filter(FieldRef("rank") != nil).sort(\.rank)
      try await expectIDs(
        ranked.offset(1).limit(.max), [8, 5, 1, 4, 7], "rank != nil by rank, offset 1, limit Int.max")
      try expectEqual(
        try await ranked.offset(1).limit(.max).count(), 5, "count(rank != nil) with offset 1, limit Int.max")
      let byID = all.filter(FieldRef("flag") == true).sort(\.id)
      try await expectIDs(byID.offset(2).limit(.max), [5, 7], "flag by id, offset 2, limit Int.max")
      try expectEqual(
        try await byID.offset(2).limit(.max).count(), 2, "count(flag) by id, offset 2, limit Int.max")
      for offset in [Int.max, Int.max - 1, Int.max / 2] {
        for query in [all, byScore, ranked, byID] {
          try await expectIDs(query.offset(offset), [], "offset \(offset)")
          try await expectIDs(query.offset(offset).limit(.max), [], "offset \(offset), limit Int.max")
          try await expectIDs(query.offset(offset).limit(2), [], "offset \(offset), limit 2")
          try expectEqual(
            try await query.offset(offset).limit(.max).count(), 0, "count with offset \(offset)")
        }
      }
      var streamed: [Int64] = []
      for try await item in byScore.offset(1).limit(.max).stream(pageSize: 3) { streamed.append(item.id) }
      try expectEqual(streamed, [8, 1, 4, 2, 7, 3, 6], "ids streamed with offset 1, limit Int.max")
    },
  ]
}
