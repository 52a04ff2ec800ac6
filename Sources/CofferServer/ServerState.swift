@_spi(Backend) import Coffer
import CofferSync
import CofferWire
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// What a running server holds: its settings, its stores and the idempotency keys it has seen.
final class ServerState: Sendable {
  let configuration: CofferServer.Configuration
  let logger: Logger
  private let stores: CofferServer.Stores
  /// Stores opened by name, each opened once (see ``store(named:)``).
  private let opened = Mutex<[String: Task<Store, any Error>]>([:])
  /// The summaries of recent keyed batches.
  let idempotency = Mutex(IdempotencyMemory())
  /// The digests of the stored schemas that reads name their layout by.
  let layoutDigests = WireLayoutDigest.Cache()
  /// The sync replica of each store, made at its first sync request (see ServerState+Sync).
  let syncReplicas = Mutex<[ObjectIdentifier: SyncReplica]>([:])

  init(stores: CofferServer.Stores, configuration: CofferServer.Configuration, logger: Logger) {
    self.stores = stores
    self.configuration = configuration
    self.logger = logger
  }

  var isNamed: Bool {
    if case .named = stores { return true }
    return false
  }

  var limits: WireLimits {
    WireLimits(
      maxRows: configuration.maxRows, maxBodyBytes: configuration.maxBodyBytes,
      maxFilterDepth: configuration.maxFilterDepth)
  }

  /// The store a request is for.
  func store(for context: BasicRequestContext) async throws -> Store {
    switch stores {
    case .single(let store):
      return store
    case .named(let open):
      guard let name = context.parameters.get("store"), Self.isStoreName(name) else {
        throw CofferError(
          .notFound, "Store names are 1 to 100 letters, digits, '.', '_' or '-'; this one is not.")
      }
      let task = opened.withLock { opened in
        if let task = opened[name] { return task }
        let task = Task { try await open(name) }
        opened[name] = task
        return task
      }
      do {
        return try await task.value
      } catch {
        _ = opened.withLock { $0.removeValue(forKey: name) }
        throw error
      }
    }
  }

  static func isStoreName(_ name: String) -> Bool {
    !name.isEmpty && name.utf8.count <= 100
      && name.utf8.allSatisfy { byte in
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
          || byte == 0x2E || byte == 0x5F || byte == 0x2D
      } && name != "." && name != ".."
  }

  /// The grant a request's bearer token carries.
  func grant(for request: Request) throws -> Grant {
    // The viewer's session cookie, when the request has no bearer token (see Viewer).
    if request.headers[.authorization] == nil, let viewer = configuration.viewer,
      let grant = try viewer.grant(for: request)
    {
      return grant
    }
    guard let tokens = configuration.tokens else { return .everything }
    guard let header = request.headers[.authorization] else {
      throw Unauthorized(message: "This server needs a bearer token: send Authorization: Bearer TOKEN.")
    }
    let prefix = "Bearer "
    guard header.count > prefix.count, header.prefix(prefix.count).lowercased() == prefix.lowercased() else {
      throw Unauthorized(message: "The Authorization header must be Bearer TOKEN.")
    }
    guard let grant = TokenCheck.grant(for: header.dropFirst(prefix.count), among: tokens) else {
      throw Unauthorized(message: "The bearer token is not one this server accepts.")
    }
    return grant
  }

  /// Reads a request's body, refusing one larger than the configured limit or slower than the
  /// body timeout.
  func body(of request: Request) async throws -> ByteBuffer {
    let limit = configuration.maxBodyBytes
    if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
      throw TooLarge(limit: limit)
    }
    let body = request.body
    return try await withTimeout(configuration.bodyTimeout) {
      var collected = ByteBuffer()
      for try await part in body {
        guard collected.readableBytes + part.readableBytes <= limit else { throw TooLarge(limit: limit) }
        var part = part
        collected.writeBuffer(&part)
      }
      return collected
    }
  }

  /// Decodes a JSON body, turning a decoding failure into ``CofferError/Code/invalidInput``.
  func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws -> T {
    do {
      return try WireCoding.decoder().decode(type, from: Data(buffer.readableBytesView))
    } catch let error as DecodingError {
      throw CofferError(
        .invalidInput, "The request body is not what this route takes: \(Self.explain(error))")
    }
  }

  /// Decodes a body by hand (`read`, which answers `nil` for any form it does not take) or else by
  /// `JSONDecoder`, whose error says what is wrong.
  func decode<T: Decodable>(
    _ type: T.Type, from buffer: ByteBuffer, reading read: (UnsafeRawBufferPointer) -> T?
  )
    throws -> T
  {
    if let value = buffer.withUnsafeReadableBytes(read) { return value }
    return try decode(type, from: buffer)
  }

  /// A decoding error in words: what was wrong and where, never the value found.
  static func explain(_ error: DecodingError) -> String {
    func path(_ keys: [any CodingKey]) -> String {
      let text = keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
      return text.isEmpty ? "the top level" : String(text.prefix(200))
    }
    switch error {
    case .typeMismatch(let type, let context): return "expected \(type) at \(path(context.codingPath))."
    case .valueNotFound(let type, let context): return "a \(type) is missing at \(path(context.codingPath))."
    case .keyNotFound(let key, let context):
      return "the key \(String(key.stringValue.prefix(100))) is missing at \(path(context.codingPath))."
    case .dataCorrupted(let context):
      return "\(String(context.debugDescription.prefix(200))) (at \(path(context.codingPath)))."
    @unknown default: return "it cannot be decoded."
    }
  }

  /// A JSON answer.
  func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
    let data = try WireCoding.encoder().encode(value)
    return Response(
      status: status, headers: [.contentType: "application/json"],
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
  }

  /// Rows as JSON, written by hand (``WireRowsJSON``): the same bytes `Codable` would give, in a
  /// fraction of its time.
  func json(_ rows: WireRows) throws -> Response {
    Response(
      status: .ok, headers: [.contentType: "application/json"],
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: try WireRowsJSON.write(rows))))
  }
}

/// A request without an accepted token: 401.
struct Unauthorized: Error {
  let message: String
}

/// A request body over the limit: 413.
struct TooLarge: Error {
  let limit: Int
}

/// A request body that did not arrive in time: 408.
struct BodyTimedOut: Error {}

/// Runs `body`, failing with ``BodyTimedOut`` when it takes longer than `limit`.
func withTimeout<R: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> R)
  async throws -> R
{
  try await withThrowingTaskGroup(of: R?.self) { group in
    group.addTask { try await body() }
    group.addTask {
      try await Task.sleep(for: limit)
      return nil
    }
    defer { group.cancelAll() }
    guard let first = try await group.next(), let result = first else { throw BodyTimedOut() }
    return result
  }
}
