@_spi(Backend) import Coffer
import CofferMemory
import CofferWire
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization

@testable import CofferServer

/// Tokens the tests use; the write one is the sentinel no log line or answer may hold.
enum TestTokens {
  static let write = "Sentinel-Token-write-5d1e8c0a"
  static let read = "reader-token-0123456789abcdef"
  static let admin = "admin-token-0123456789abcdef"
  static let notes = "notes-only-token-0123456789ab"

  static let all: [CofferServer.Token] = [
    .init(secret: write, scopes: [.write]),
    .init(secret: read, scopes: [.read]),
    .init(secret: admin, scopes: [.admin, .write]),
    .init(secret: notes, scopes: [.write], entities: ["Note"]),
  ]
}

/// Log lines, kept to search for secrets.
final class RecordedLog: Sendable {
  let lines = Mutex<[String]>([])

  var text: String { lines.withLock { $0.joined(separator: "\n") } }

  func handler(label: String) -> any LogHandler { Handler(log: self) }

  struct Handler: LogHandler {
    let log: RecordedLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { metadata[key] }
      set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
      let all = metadata.merging(event.metadata ?? [:]) { $1 }
      log.lines.withLock { $0.append("\(event.level) \(event.message) \(all)") }
    }
  }
}

/// One answer: status and body.
struct Answer {
  let status: Int
  let body: Data
  let headers: HTTPFields

  var text: String { String(decoding: body, as: UTF8.self) }

  func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(type, from: body) }

  /// The error code of a failure answer.
  var code: String? { try? decode(WireError.self).error.code }
}

/// A server over a memory store, driven without a socket.
struct ServerHarness {
  let store: Store
  let server: CofferServer
  let log = RecordedLog()

  init(
    store: Store? = nil, tokens: [CofferServer.Token]? = TestTokens.all,
    configure: (inout CofferServer.Configuration) -> Void = { _ in }
  ) {
    self.store = store ?? Store(backend: MemoryBackend())
    var configuration = CofferServer.Configuration(tokens: tokens)
    configure(&configuration)
    let log = self.log
    server = CofferServer(
      store: self.store, configuration: configuration,
      logger: Logger(label: "test", factory: { log.handler(label: $0) }))
  }

  /// Runs `body` with a client of the server.
  func run(_ body: @Sendable (Client) async throws -> Void) async throws {
    try await server.makeApplication().test(.router) { client in try await body(Client(client: client)) }
  }

  struct Client: Sendable {
    let client: any TestClientProtocol

    func send(
      _ method: HTTPRequest.Method, _ path: String, token: String? = TestTokens.admin, body: String? = nil,
      headers extra: HTTPFields = [:]
    ) async throws -> Answer {
      var headers = extra
      headers[.contentType] = "application/json"
      if let token { headers[.authorization] = "Bearer \(token)" }
      let response = try await client.execute(
        uri: path, method: method, headers: headers, body: body.map { ByteBuffer(string: $0) })
      return Answer(
        status: Int(response.status.code), body: Data(response.body.readableBytesView),
        headers: response.headers)
    }

    func post(
      _ path: String, _ value: some Encodable, token: String? = TestTokens.admin, headers: HTTPFields = [:]
    )
      async throws -> Answer
    {
      let body = String(decoding: try JSONEncoder().encode(value), as: UTF8.self)
      return try await send(.post, path, token: token, body: body, headers: headers)
    }

    /// Prepares the test's note schema.
    func prepareNotes(token: String = TestTokens.admin) async throws -> Answer {
      try await post("/v1/prepare", WirePrepare(schemas: [Fixtures.notes]), token: token)
    }
  }
}

enum Fixtures {
  /// id, title (unique), count, score, tag (optional), body (bytes), at (date), ref (uuid), extra (document).
  static let notes: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Note",
        fields: [
          Field("id", .int), Field("title", .string), Field("count", .int), Field("score", .double),
          Field("tag", .string, isOptional: true), Field("body", .bytes), Field("at", .date),
          Field("ref", .uuid),
          Field("extra", .document),
        ], idField: "id", indexes: [.unique("title")])
    } catch {
      preconditionFailure("The fixture schema is valid: \(error)")
    }
  }()

  static func note(
    _ id: Int64, title: String? = nil, count: Int64 = 0, score: Double = 1.5, tag: String? = nil,
    body: Data = Data([0, 1, 2, 255]), at: Date = Date(timeIntervalSince1970: 1_700_000_000.123456),
    extra: Data = Data(#"{"b":[1,2],"a":"x"}"#.utf8)
  ) -> Row {
    Row([
      .int(id), .string(title ?? "note \(id)"), .int(count), .double(score), tag.map(Value.string) ?? .null,
      .bytes(body), .date(at), .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()),
      .document(extra),
    ])
  }

  static func insert(_ rows: [Row]) -> WireBatch {
    WireBatch(ChangeSet(rows.map { .insert(entity: "Note", row: $0) }))
  }
}
