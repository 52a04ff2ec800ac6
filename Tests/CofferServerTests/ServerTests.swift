@_spi(Backend) import Coffer
import CofferMemory
import CofferTestSupport
import CofferWire
import Foundation
import HTTPTypes
import Testing

@testable import CofferServer

@Suite("Server routes")
struct ServerRouteTests {
  @Test("every value kind comes back exactly: Int64 extremes, -0.0, infinities, bytes, µs dates, documents")
  func valuesRoundTrip() async throws {
    let harness = ServerHarness()
    try await harness.run { client in
      #expect(try await client.prepareNotes().status == 200)
      let rows = [
        Fixtures.note(Int64.min, count: Int64.max, score: -0.0),
        Fixtures.note(Int64.max, count: Int64.min, score: .infinity, tag: "é\u{301}%_*"),
        Fixtures.note(
          0, score: -.infinity, body: Data(), at: Date(timeIntervalSince1970: -1.000001),
          extra: Data(#"{"z":1,  "a" : [ ]}"#.utf8)),
        Fixtures.note(
          1, score: .leastNonzeroMagnitude, at: Date(timeIntervalSince1970: 4_102_444_800.999999)),
      ]
      let applied = try await client.post("/v1/apply", Fixtures.insert(rows))
      #expect(applied.status == 200, "\(applied.text)")
      #expect(try applied.decode(WireSummary.self).inserted == 4)
      let read = try await client.post("/v1/read", WireQuery(Query(entity: "Note")), token: TestTokens.read)
      let back = try read.decode(WireRows.self).rows
      let expected = rows.sorted { a, b in ValueOrder.compare(a[0], b[0]) < 0 }
      #expect(back.count == expected.count)
      for (got, want) in zip(back, expected) {
        #expect(Row(got).isIdenticalForTest(to: want))
      }
    }
  }

  @Test("a NaN or a malformed value is refused with 400 and nothing is stored")
  func nanRefused() async throws {
    let harness = ServerHarness()
    try await harness.run { client in
      _ = try await client.prepareNotes()
      let nan =
        #"{"operations":[{"insert":{"entity":"Note","row":[{"int":1},{"string":"a"},{"int":0},{"double":"nan"},{"null":true},{"bytes":""},{"date":0},{"uuid":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"},{"document":""}]}}]}"#
      let answer = try await client.send(.post, "/v1/apply", body: nan)
      #expect(answer.status == 400)
      #expect(answer.code == "invalidInput")
      let count = try await client.post("/v1/count", WireQuery(Query(entity: "Note")))
      #expect(try count.decode(WireCount.self).count == 0)
    }
  }

  @Test("a batch with a duplicate id applies nothing and answers 409 duplicateID naming the entity")
  func batchAllOrNothing() async throws {
    let harness = ServerHarness()
    try await harness.run { client in
      _ = try await client.prepareNotes()
      _ = try await client.post("/v1/apply", Fixtures.insert([Fixtures.note(1)]))
      let answer = try await client.post(
        "/v1/apply", Fixtures.insert([Fixtures.note(2), Fixtures.note(1, title: "x")]))
      #expect(answer.status == 409)
      let error = try answer.decode(WireError.self)
      #expect(error.error.code == "duplicateID")
      #expect(error.error.entity == "Note")
      #expect(error.cofferError.code == .duplicateID)
      let count = try await client.post("/v1/count", WireQuery(Query(entity: "Note")))
      #expect(try count.decode(WireCount.self).count == 1)
    }
  }

  @Test("a failed precondition answers 409 conflict and applies nothing")
  func preconditions() async throws {
    let harness = ServerHarness()
    try await harness.run { client in
      _ = try await client.prepareNotes()
      _ = try await client.post("/v1/apply", Fixtures.insert([Fixtures.note(1)]))
      var changes = ChangeSet([.insert(entity: "Note", row: Fixtures.note(2))])
      changes.preconditions = [.absent(.int(1), in: Fixtures.notes)]
      let refused = try await client.post("/v1/apply", WireBatch(changes))
      #expect(refused.status == 409)
      #expect(refused.code == "conflict")
      changes.preconditions = [
        .present(.int(1), in: Fixtures.notes), .unchanged(Fixtures.note(1), in: Fixtures.notes),
      ]
      let applied = try await client.post("/v1/apply", WireBatch(changes))
      #expect(applied.status == 200, "\(applied.text)")
      let count = try await client.post("/v1/count", WireQuery(Query(entity: "Note")))
      #expect(try count.decode(WireCount.self).count == 2)
    }
  }

  @Test("a retried idempotency key applies once; the same key with another body is refused with 422")
  func idempotency() async throws {
    let harness = ServerHarness()
    try await harness.run { client in
      _ = try await client.prepareNotes()
      let key: HTTPFields = [.init(WirePath.idempotencyKey)!: "batch-1"]
      let batch = WireBatch(
        ChangeSet([
          .upsert(entity: "Note", row: Fixtures.note(1)),
          .update(entity: "Note", row: Fixtures.note(1, count: 5)),
        ]))
      let first = try await client.post("/v1/apply", batch, headers: key)
      #expect(first.status == 200, "\(first.text)")
      let summary = try first.decode(WireSummary.self)
      #expect(!summary.replayed)
      let again = try await client.post("/v1/apply", batch, headers: key)
      #expect(again.status == 200)
      let replay = try again.decode(WireSummary.self)
      #expect(replay.replayed)
      #expect(replay.summary == summary.summary)
      let other = try await client.post("/v1/apply", Fixtures.insert([Fixtures.note(9)]), headers: key)
      #expect(other.status == 422)
      let count = try await client.post("/v1/count", WireQuery(Query(entity: "Note")))
      #expect(try count.decode(WireCount.self).count == 1)
      // The key entity is the server's own: not listed, not readable.
      let listed = try await client.post("/v1/prepare", WirePrepare(schemas: []))
      #expect(try listed.decode(WireSchemas.self).schemas.map(\.name) == ["Note"])
      let hidden = try await client.post("/v1/read", WireQuery(Query(entity: IdempotencyMemory.entity)))
      #expect(hidden.status == 404)
    }
  }

  @Test("a key applied before a restart is still applied once after it")
  func idempotencyAcrossRestart() async throws {
    let store = Store(backend: MemoryBackend())
    let key: HTTPFields = [.init(WirePath.idempotencyKey)!: "restart-1"]
    let batch = Fixtures.insert([Fixtures.note(1)])
    try await ServerHarness(store: store).run { client in
      _ = try await client.prepareNotes()
      #expect(try await client.post("/v1/apply", batch, headers: key).status == 200)
    }
    try await ServerHarness(store: store).run { client in
      let again = try await client.post("/v1/apply", batch, headers: key)
      #expect(again.status == 200, "\(again.text)")
      #expect(try again.decode(WireSummary.self).replayed)
      let count = try await client.post("/v1/count", WireQuery(Query(entity: "Note")))
      #expect(try count.decode(WireCount.self).count == 1)
    }
  }

  @Test(
    "a key stored with an earlier version's digest of the batch is still replayed, and another body still refused"
  )
  func idempotencyAcrossTheDigestChange() async throws {
    let store = Store(backend: MemoryBackend())
    let key: HTTPFields = [.init(WirePath.idempotencyKey)!: "legacy-1"]
    let batch = Fixtures.insert([Fixtures.note(1)])
    try await ServerHarness(store: store).run { client in
      _ = try await client.prepareNotes()
      #expect(try await client.post("/v1/apply", batch, headers: key).status == 200)
    }
    // What an earlier version stored for the same batch.
    let schema = try #require(IdempotencyMemory.schema)
    let legacy = try ServerState.legacyDigest(batch, references: .enforce)
    #expect(!legacy.hasPrefix("s"))
    try await store.backend.apply(
      ChangeSet(
        [
          .update(
            entity: IdempotencyMemory.entity, row: Row([.string("legacy-1"), .string(legacy), .date(Date())]))
        ],
        layouts: [IdempotencyMemory.entity: schema]))
    try await ServerHarness(store: store).run { client in
      let again = try await client.post("/v1/apply", batch, headers: key)
      #expect(again.status == 200, "\(again.text)")
      #expect(try again.decode(WireSummary.self).replayed)
      let other = try await client.post("/v1/apply", Fixtures.insert([Fixtures.note(2)]), headers: key)
      #expect(other.status == 422)
      let count = try await client.post("/v1/count", WireQuery(Query(entity: "Note")))
      #expect(try count.decode(WireCount.self).count == 1)
    }
  }

  @Test("one batch has one idempotency digest, whatever its layouts' order; any other value gives another")
  func idempotencyDigests() throws {
    var random = SeededGenerator(seed: 4_404)
    let other = try EntitySchema(name: "Other", fields: [Field("id", .string)], idField: "id")
    for _ in 0..<100 {
      var batch = WireBatchJSONTests.randomBatch(&random)
      batch.operations.append(WireOperation(.insert(entity: "Note", row: Row([.double(0), .int(1)]))))
      batch.layouts = Dictionary(uniqueKeysWithValues: [("Note", Fixtures.notes), ("Other", other)])
      let digest = try ServerState.digest(batch, references: .enforce)
      #expect(digest.hasPrefix("s"))
      var reordered = batch
      reordered.layouts = Dictionary(uniqueKeysWithValues: [("Other", other), ("Note", Fixtures.notes)])
      #expect(try ServerState.digest(reordered, references: .enforce) == digest)
      #expect(try ServerState.digest(batch, references: .expanded) != digest)
      var changed = batch
      changed.operations[changed.operations.count - 1] = WireOperation(
        .insert(entity: "Note", row: Row([.double(-0.0), .int(1)])))
      #expect(try ServerState.digest(changed, references: .enforce) != digest)
      changed = batch
      changed.layouts = ["Note": Fixtures.notes]
      #expect(try ServerState.digest(changed, references: .enforce) != digest)
    }
  }

  @Test("keyset pages walk every row once, and a projection returns only the fields asked for")
  func keysetAndProjection() async throws {
    let harness = ServerHarness()
    try await harness.run { client in
      _ = try await client.prepareNotes()
      var rows: [Row] = []
      for id in Int64(1)...25 {
        let tag: String? = id % 3 == 0 ? nil : "t\(id % 5)"
        rows.append(Fixtures.note(id, count: id % 4, tag: tag))
      }
      _ = try await client.post("/v1/apply", Fixtures.insert(rows))
      for ascending in [true, false] {
        var seen: [Value] = []
        var query = WireQuery(
          Query(
            entity: "Note", sort: [Sort("tag", ascending: ascending), Sort("count", ascending: !ascending)],
            limit: 4))
        while true {
          let page = try (await client.post("/v1/read", query)).decode(WireRows.self)
          seen += page.rows.map { $0[0] }
          guard let next = page.next else { break }
          query.after = next
        }
        let all = try
          (await client.post("/v1/read", WireQuery(Query(entity: "Note", sort: query.query.sort)))).decode(
            WireRows.self)
        #expect(seen == all.rows.map { $0[0] })
        #expect(Set(seen).count == 25)
      }
      var projected = WireQuery(
        Query(entity: "Note", filter: .compare(field: "id", op: .lessOrEqual, value: 2)))
      projected.select = ["title", "id"]
      let answer = try (await client.post("/v1/read", projected)).decode(WireRows.self)
      #expect(answer.rows == [[.string("note 1"), .int(1)], [.string("note 2"), .int(2)]])
    }
  }

  @Test("a read names its layout by the stored schema's digest; any other digest answers 409 schemaMismatch")
  func layoutByDigest() async throws {
    let harness = ServerHarness()
    try await harness.run { client in
      _ = try await client.prepareNotes()
      _ = try await client.post("/v1/apply", Fixtures.insert((1...3).map { Fixtures.note(Int64($0)) }))
      var query = WireQuery(Query(entity: "Note", filter: .compare(field: "id", op: .equal, value: .int(2))))
      query.layoutDigest = WireLayoutDigest.of(Fixtures.notes)
      let named = try (await client.post("/v1/read", query)).decode(WireRows.self)
      query.layoutDigest = nil
      query.layout = Fixtures.notes
      let whole = try (await client.post("/v1/read", query)).decode(WireRows.self)
      #expect(named.rows.count == 1 && named.rows == whole.rows)

      let idOnly = try EntitySchema(name: "Note", fields: [Field("id", .int)], idField: "id")
      query.layout = nil
      query.layoutDigest = WireLayoutDigest.of(idOnly)
      let refused = try await client.post("/v1/read", query)
      #expect(refused.status == 409)
      #expect(refused.code == CofferError.Code.schemaMismatch.name)
      // A layout given whole wins over a digest beside it.
      query.layout = idOnly
      let projected = try (await client.post("/v1/read", query)).decode(WireRows.self)
      #expect(projected.rows == [[.int(2)]])
    }
  }

  @Test("get, count and aggregate answer like the store")
  func getCountAggregate() async throws {
    let harness = ServerHarness()
    try await harness.run { client in
      _ = try await client.prepareNotes()
      _ = try await client.post(
        "/v1/apply", Fixtures.insert((1...6).map { Fixtures.note(Int64($0), count: Int64($0)) }))
      let got = try
        (await client.post("/v1/get", WireGet(entity: "Note", ids: [.int(5), .int(99), .int(2)]))).decode(
          WireRows.self)
      #expect(got.rows.map { $0[0] } == [.int(5), .int(2)])
      let counted = try
        (await client.post(
          "/v1/count",
          WireQuery(Query(entity: "Note", filter: .compare(field: "count", op: .greater, value: 3))))).decode(
          WireCount.self)
      #expect(counted.count == 3)
      let sum = try
        (await client.post("/v1/aggregate", WireAggregation(Aggregation(entity: "Note", .sum("count")))))
        .decode(WireGroups.self)
      #expect(sum.groups == [WireGroup(key: .null, value: .int(21))])
    }
  }

  @Test("the change feed lists batches without the server's own entity, and resumes after a position")
  func changeFeed() async throws {
    let harness = ServerHarness()
    try await harness.run { client in
      _ = try await client.prepareNotes()
      #expect(
        try await client.post("/v1/admin/changes/record", WireRetention(retention: "all")).status == 200)
      let key: HTTPFields = [.init(WirePath.idempotencyKey)!: "feed-1"]
      _ = try await client.post("/v1/apply", Fixtures.insert([Fixtures.note(1)]), headers: key)
      _ = try await client.post("/v1/apply", WireBatch(ChangeSet([.delete(entity: "Note", id: .int(1))])))
      let all = try (await client.send(.get, "/v1/changes?after=0", token: TestTokens.read)).decode(
        WireChangeBatches.self)
      #expect(all.batches.count == 2)
      #expect(all.batches.flatMap(\.changes).map(\.entity) == ["Note", "Note"])
      #expect(all.batches.flatMap(\.changes).map(\.kind) == [.insert, .delete])
      let decoded = try all.batches[0].recorded.decoded(store: nil).changes
      #expect(decoded.map(\.entity) == ["Note"])
      let after = try (await client.send(.get, "/v1/changes?after=\(all.batches[0].sequence)")).decode(
        WireChangeBatches.self)
      #expect(after.batches.map(\.sequence) == [all.batches[1].sequence])
      let bounds = try (await client.send(.get, "/v1/changes/bounds")).decode(WireBounds.self)
      #expect(bounds.bounds?.last == all.batches[1].sequence)
      let stream = try await client.send(.get, "/v1/changes/stream?after=0&follow=false")
      #expect(stream.status == 200)
      #expect(stream.text.contains("id: \(all.batches[1].sequence)\nevent: batch\ndata: "))
      #expect(!stream.text.contains(IdempotencyMemory.entity))
    }
  }

  @Test("a malformed stream request is refused with 400 before the feed's state is looked at")
  func malformedStreamRequest() async throws {
    let harness = ServerHarness()
    try await harness.run { client in
      _ = try await client.prepareNotes()
      // The feed is off here: a request checked after the feed would get its 409 instead.
      for query in ["follow=null", "follow=yes&after=0", "after=later"] {
        let response = try await client.send(.get, "/v1/changes/stream?\(query)")
        #expect(response.status == 400, "\(query): \(response.status)")
        #expect(response.text.contains("invalidInput"), "\(query): \(response.text)")
      }
    }
  }
}

extension Row {
  /// Equal value for value, doubles by their bits (so -0.0 is not 0.0).
  func isIdenticalForTest(to other: Row) -> Bool {
    guard values.count == other.values.count else { return false }
    for (a, b) in zip(values, other.values) {
      switch (a, b) {
      case (.double(let x), .double(let y)): if x.bitPattern != y.bitPattern { return false }
      default: if a != b { return false }
      }
    }
    return true
  }
}
