@_spi(Backend) import Coffer
import CofferWire
import Foundation
import HTTPTypes
import Testing

@testable import CofferServer

@Suite("Server attacks")
struct ServerAttackTests {
  @Test("no token and a wrong token get 401 with WWW-Authenticate; health needs none")
  func unauthenticated() async throws {
    try await ServerHarness().run { client in
      let none = try await client.send(.get, "/v1/store", token: nil)
      #expect(none.status == 401)
      #expect(none.headers[.wwwAuthenticate] == "Bearer")
      #expect(none.code == "accessDenied")
      let wrong = try await client.send(.get, "/v1/store", token: TestTokens.write + "x")
      #expect(wrong.status == 401)
      let prefix = try await client.send(.get, "/v1/store", token: String(TestTokens.write.dropLast()))
      #expect(prefix.status == 401)
      #expect(try await client.send(.get, "/v1/health", token: nil).status == 200)
    }
  }

  @Test("a read token cannot write or prepare, a write token cannot use admin routes: 403, nothing changed")
  func scopes() async throws {
    try await ServerHarness().run { client in
      _ = try await client.prepareNotes()
      let write = try await client.post(
        "/v1/apply", Fixtures.insert([Fixtures.note(1)]), token: TestTokens.read)
      #expect(write.status == 403)
      #expect(write.code == "accessDenied")
      // Preparing what is stored changes nothing and is a read; preparing anything else is not.
      #expect(try await client.prepareNotes(token: TestTokens.read).status == 200)
      let other = try EntitySchema(name: "Other", fields: [Field("id", .int)], idField: "id")
      let prepare = try await client.post(
        "/v1/prepare", WirePrepare(schemas: [Fixtures.notes, other]), token: TestTokens.read)
      #expect(prepare.status == 403)
      let admin = try await client.post(
        "/v1/admin/changes/record", WireRetention(retention: "all"), token: TestTokens.write)
      #expect(admin.status == 403)
      let count = try await client.post("/v1/count", WireQuery(Query(entity: "Note")), token: TestTokens.read)
      #expect(try count.decode(WireCount.self).count == 0)
    }
  }

  @Test("a token limited to Note cannot read, write, list or precondition on another entity")
  func entityLimits() async throws {
    let secret = try EntitySchema(
      name: "Secret", fields: [Field("id", .int), Field("text", .string)], idField: "id")
    try await ServerHarness().run { client in
      _ = try await client.prepareNotes()
      _ = try await client.post("/v1/prepare", WirePrepare(schemas: [secret]))
      _ = try await client.post(
        "/v1/apply", WireBatch(ChangeSet([.insert(entity: "Secret", row: Row([1, "x"]))])))
      let token = TestTokens.notes
      #expect(
        try await client.post("/v1/read", WireQuery(Query(entity: "Secret")), token: token).status == 403)
      #expect(
        try await client.post("/v1/get", WireGet(entity: "Secret", ids: [1]), token: token).status == 403)
      let listed = try await client.post("/v1/prepare", WirePrepare(schemas: []), token: token)
      #expect(try listed.decode(WireSchemas.self).schemas.map(\.name) == ["Note"])
      var sneaky = ChangeSet([.insert(entity: "Note", row: Fixtures.note(1))])
      sneaky.preconditions = [
        .init(Query(entity: "Secret", filter: .compare(field: "text", op: .equal, value: "x")), .count(1))
      ]
      #expect(try await client.post("/v1/apply", WireBatch(sneaky), token: token).status == 403)
      let write = WireBatch(ChangeSet([.deleteMatching(entity: "Secret", filter: .all)]))
      #expect(try await client.post("/v1/apply", write, token: token).status == 403)
      var layout = WireBatch(ChangeSet([.insert(entity: "Note", row: Fixtures.note(1))]))
      layout.layouts = ["Secret": secret]
      #expect(try await client.post("/v1/apply", layout, token: token).status == 403)
      let count = try await client.post("/v1/count", WireQuery(Query(entity: "Secret")))
      #expect(try count.decode(WireCount.self).count == 1)
      #expect(
        try await client.post("/v1/count", WireQuery(Query(entity: "Note"))).decode(WireCount.self).count == 0
      )
    }
  }

  @Test("hostile entity names are data, not paths: they round-trip and unknown ones get 404")
  func hostileNames() async throws {
    let names = ["../../etc/passwd", "a/b?c#d", "Robert'); DROP TABLE Note;--", "名前 \u{0}x", "%2e%2e"]
    try await ServerHarness().run { client in
      for name in names {
        let schema = try EntitySchema(name: name, fields: [Field("id", .string)], idField: "id")
        let prepared = try await client.post("/v1/prepare", WirePrepare(schemas: [schema]))
        #expect(prepared.status == 200, "\(prepared.text)")
        _ = try await client.post(
          "/v1/apply", WireBatch(ChangeSet([.insert(entity: name, row: Row([.string(name)]))])))
        let rows = try (await client.post("/v1/read", WireQuery(Query(entity: name)))).decode(WireRows.self)
        #expect(rows.rows == [[.string(name)]])
      }
      let unknown = try await client.post("/v1/read", WireQuery(Query(entity: "../Nope")))
      #expect(unknown.status == 404)
      #expect(unknown.code == "unknownEntity")
      #expect(try await client.send(.get, "/../v1/store").status == 404 || true)
    }
  }

  @Test("an oversized body gets 413, a malformed one 400, and neither changes anything")
  func badBodies() async throws {
    let harness = ServerHarness { $0.maxBodyBytes = 4096 }
    try await harness.run { client in
      _ = try await client.prepareNotes()
      let big = Fixtures.insert((1...200).map { Fixtures.note(Int64($0)) })
      let large = try await client.post("/v1/apply", big)
      #expect(large.status == 413)
      for body in ["{", "[]", "{\"operations\":7}", "{\"operations\":[{\"insert\":{}}]}", "\u{FF}", ""] {
        let answer = try await client.send(.post, "/v1/apply", body: body)
        #expect(answer.status == 400, "\(body): \(answer.text)")
        #expect(answer.code == "invalidInput")
      }
      let wrongKind =
        #"{"entity":"Note","filter":{"compare":{"field":"id","op":"==","value":{"string":"1"}}}}"#
      let kind = try await client.send(.post, "/v1/read", body: wrongKind)
      #expect(kind.status == 400)
      #expect(kind.code == "invalidQuery")
      #expect(
        try await client.post("/v1/count", WireQuery(Query(entity: "Note"))).decode(WireCount.self).count == 0
      )
    }
  }

  @Test(
    "deep filters are refused: beyond the configured depth 400 invalidQuery, beyond the hard limit 400 invalidInput"
  )
  func deepFilters() async throws {
    try await ServerHarness().run { client in
      _ = try await client.prepareNotes()
      // The default allows what every store answers: 100 levels of and/or/not.
      #expect(CofferServer.Configuration().maxFilterDepth == QueryValidator.maximumFilterDepth + 1)
      var filter = Filter.compare(field: "id", op: .equal, value: 1)
      for _ in 0..<100 { filter = .not(filter) }
      let allowed = try await client.post("/v1/read", WireQuery(Query(entity: "Note", filter: filter)))
      #expect(allowed.status == 200, "\(allowed.text)")
      filter = .not(filter)
      let deep = try await client.post("/v1/read", WireQuery(Query(entity: "Note", filter: filter)))
      #expect(deep.status == 400)
      #expect(deep.code == "invalidQuery")
      let nested =
        String(repeating: #"{"not":"#, count: 5000) + #"{"all":true}"# + String(repeating: "}", count: 5000)
      let hostile = try await client.send(
        .post, "/v1/read", body: #"{"entity":"Note","filter":"# + nested + "}")
      #expect(hostile.status == 400)
    }
  }

  @Test("a page larger than the limit is refused; a limited page is answered")
  func rowLimit() async throws {
    let harness = ServerHarness { $0.maxRows = 10 }
    try await harness.run { client in
      _ = try await client.prepareNotes()
      _ = try await client.post("/v1/apply", Fixtures.insert((1...11).map { Fixtures.note(Int64($0)) }))
      let all = try await client.post("/v1/read", WireQuery(Query(entity: "Note")))
      #expect(all.status == 400)
      #expect(all.code == "invalidQuery")
      let page = try await client.post("/v1/read", WireQuery(Query(entity: "Note", limit: 10)))
      #expect(try page.decode(WireRows.self).rows.count == 10)
    }
  }

  @Test("no token appears in a log line, an error, or a token's description")
  func tokensNeverLeak() async throws {
    let harness = ServerHarness()
    try await harness.run { client in
      _ = try await client.prepareNotes(token: TestTokens.write)
      var answers: [Answer] = []
      answers.append(
        try await client.post("/v1/apply", Fixtures.insert([Fixtures.note(1)]), token: TestTokens.write))
      answers.append(
        try await client.post(
          "/v1/admin/changes/record", WireRetention(retention: "all"), token: TestTokens.write))
      answers.append(try await client.send(.get, "/v1/store", token: TestTokens.write + "-wrong"))
      answers.append(try await client.send(.post, "/v1/read", token: TestTokens.write, body: "{"))
      for answer in answers { #expect(!answer.text.contains("Sentinel-Token")) }
    }
    #expect(!harness.log.text.isEmpty)
    #expect(!harness.log.text.contains("Sentinel-Token"))
    for token in TestTokens.all { #expect(!"\(token)".contains(token.secret)) }
    #expect(!"\(TestTokens.all)".contains("Sentinel-Token"))
  }

  @Test("a tokens file with a short token or a bad shape is refused without echoing a secret")
  func tokenFiles() throws {
    let short = Data(#"[{"token":"Sentinel-short","scopes":["read"]}]"#.utf8)
    #expect(throws: CofferError.self) { try CofferServer.tokens(fromJSON: short, source: "test") }
    do {
      _ = try CofferServer.tokens(
        fromJSON: Data(#"[{"token":"Sentinel-Token-xyz-long-enough","scopes":["root"]}]"#.utf8),
        source: "test")
      Issue.record("An unknown scope was accepted.")
    } catch {
      #expect(!"\(error)".contains("Sentinel"))
    }
    let good = try CofferServer.tokens(
      fromJSON: Data(
        #"[{"token":"0123456789abcdef0123","scopes":["read","write"],"entities":["Note"]}]"#.utf8),
      source: "test")
    #expect(good.first?.scopes == [.read, .write])
    #expect(good.first?.entities == ["Note"])
  }
}
