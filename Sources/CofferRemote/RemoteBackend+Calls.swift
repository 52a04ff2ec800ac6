@_spi(Backend) import Coffer
import CofferWire
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

extension RemoteBackend {
  /// Sends a request whose body is `request` and decodes its answer, trying again while the
  /// server cannot be reached or its answer is lost (for ``Configuration/retryFor``): what every
  /// read and every other request without side effects a repeat could double goes through.
  func call<Request: Encodable, Answer: Decodable>(
    _ method: HTTPMethod, _ path: String, _ request: Request, as type: Answer.Type
  ) async throws -> Answer {
    try checkOpen()
    let body: ByteBuffer
    do {
      body = try Self.encode(request)
    } catch let error as CofferError {
      throw error.inStore(name)
    }
    return try await Self.call(transport, method, path, body: body, retrying: true, name: name, as: type)
  }

  /// A read's rows, its layout named by digest once the server has taken that digest for the
  /// entity's stored schema (the layout is sent whole until then, and after the server refuses it).
  func readRows(_ query: Query) async throws -> WireRows {
    var wire = WireQuery(query)
    if let layout = query.layout, let digest = layoutDigests.digest(of: layout) {
      wire.layout = nil
      wire.layoutDigest = digest
      do {
        return try await send(wire, to: "/v1/read", as: WireRows.self)
      } catch let error as CofferError where error.code == .schemaMismatch {
        // The server's schema is another (or its JSON differs): name this layout whole from now on.
        layoutDigests.refuse(layout)
        wire.layout = layout
        wire.layoutDigest = nil
      }
    }
    return try await send(wire, to: "/v1/read", as: WireRows.self)
  }

  /// Sends a query, written by hand (``WireQueryJSON``), and decodes the answer, tried again as
  /// ``call(_:_:_:as:)`` does.
  func send<Answer: Decodable>(_ query: WireQuery, to path: String, as type: Answer.Type) async throws
    -> Answer
  {
    try checkOpen()
    let body: ByteBuffer
    do {
      body = ByteBuffer(bytes: try WireQueryJSON.write(query))
    } catch {
      throw CofferError(
        .invalidValue, "A query could not be written as JSON (a value no store holds, such as NaN).",
        store: name, entity: query.entity)
    }
    return try await Self.call(transport, .POST, path, body: body, retrying: true, name: name, as: type)
  }

  /// A `GET` of `path`, decoded, tried again as ``call(_:_:_:as:)`` does.
  func get<Answer: Decodable>(_ path: String, as type: Answer.Type, timeout: Duration? = nil) async throws
    -> Answer
  {
    try checkOpen()
    return try await Self.call(
      transport, .GET, path, body: nil, retrying: true, name: name, as: type, timeout: timeout)
  }

  static func call<Answer: Decodable>(
    _ transport: RemoteTransport, _ method: HTTPMethod, _ path: String, body: ByteBuffer?, retrying: Bool,
    name: String, as type: Answer.Type, timeout: Duration? = nil
  ) async throws -> Answer {
    var backoff = RemoteBackoff(retryFor: retrying ? transport.configuration.retryFor : .zero)
    while true {
      let answer: RemoteTransport.Answer
      do {
        answer = try await transport.send(method, path, body: body, timeout: timeout)
      } catch let lost as RemoteTransport.Lost {
        if try await backoff.wait() { continue }
        throw unreachable(lost, name: name, batch: nil)
      }
      if (200..<300).contains(answer.status) { return try decode(type, from: answer.body, name: name) }
      let error = serverError(answer, name: name)
      if error.code == .unavailable, try await backoff.wait() { continue }
      throw error
    }
  }

  /// What a batch came to: the server's summary, and whether it was applied before this call
  /// (by a try whose answer was lost).
  struct BatchOutcome {
    var summary: ChangeSummary
    var replayed: Bool
  }

  /// Sends a batch under a new idempotency key, each layout named by digest where the server
  /// takes it (and sent whole after the server refuses a digest, the batch then sent again:
  /// a refused batch applied nothing).
  func sendBatch(_ changes: ChangeSet) async throws -> BatchOutcome {
    var batch = WireBatch(changes, references: .expanded)
    var named: [String: EntitySchema] = [:]
    for (entity, layout) in changes.layouts {
      guard let digest = layoutDigests.digest(of: layout) else { continue }
      named[entity] = layout
      batch.layouts?[entity] = nil
      batch.layoutDigests = (batch.layoutDigests ?? [:]).merging([entity: digest]) { $1 }
    }
    if batch.layouts?.isEmpty == true { batch.layouts = nil }
    do {
      return try await sendBatch(try body(of: batch), key: UUID().uuidString)
    } catch let error as CofferError where error.code == .schemaMismatch {
      guard let entity = error.entity, let layout = named[entity] else { throw error }
      // The server's schema is another (or its JSON differs): name this layout whole from now on.
      layoutDigests.refuse(layout)
      return try await sendBatch(changes)
    }
  }

  /// A batch's body, written by hand (``WireBatchJSON``).
  private func body(of batch: WireBatch) throws -> ByteBuffer {
    do {
      return ByteBuffer(bytes: try WireBatchJSON.write(batch))
    } catch let error as CofferError {
      throw error.inStore(name)
    } catch {
      throw CofferError(
        .invalidValue, "A batch could not be written as JSON (a value no store holds, such as NaN).",
        store: name)
    }
  }

  /// Sends a batch body under an idempotency key until the server answers or the time for
  /// retrying is over.
  func sendBatch(_ body: ByteBuffer, key: String) async throws -> BatchOutcome {
    var backoff = RemoteBackoff(retryFor: configuration.retryFor)
    // Whether some try may have reached the server: then a failure to reach it later cannot say
    // that nothing was applied.
    var maybeApplied = false
    while true {
      let answer: RemoteTransport.Answer
      do {
        answer = try await transport.send(.POST, "/v1/apply", body: body, headers: [("Idempotency-Key", key)])
      } catch let lost as RemoteTransport.Lost {
        if case .answerLost = lost { maybeApplied = true }
        do {
          if try await backoff.wait() { continue }
        } catch {
          if maybeApplied { throw cancelled() }
          throw error
        }
        throw Self.unreachable(lost, name: name, batch: maybeApplied)
      } catch is CancellationError {
        throw cancelled()
      }
      if (200..<300).contains(answer.status) {
        let summary = try Self.decode(WireSummary.self, from: answer.body, name: name)
        if summary.replayed {
          logger.debug(
            "A batch sent again after its answer was lost had been applied once; not applied again")
        }
        return BatchOutcome(summary: summary.summary, replayed: summary.replayed)
      }
      let error = Self.serverError(answer, name: name)
      // The server refused it before applying anything (shutting down, its store unreachable):
      // the same key may go again.
      if error.code == .unavailable, try await backoff.wait() { continue }
      throw error
    }
  }

  /// The error for a batch whose task was cancelled while it was (or may have been) with the
  /// server.
  func cancelled() -> CofferError {
    CofferError(
      .outcomeUnknown,
      "The task sending a batch was cancelled before the server answered: the batch may or may not have "
        + "been applied. Read the rows it changes to find out.",
      store: name)
  }

  /// The error for a server that could not be reached (or whose answers were lost) for the whole
  /// time of retrying. `batch` is `nil` for a request without side effects, else whether a batch
  /// may have been applied.
  static func unreachable(_ lost: RemoteTransport.Lost, name: String, batch maybeApplied: Bool?)
    -> CofferError
  {
    let cause: any Error
    let reason: String
    switch lost {
    case .notSent(let error):
      cause = error
      reason = "could not be reached (nothing listens there, or it refused the connection)"
    case .answerLost(let error):
      cause = error
      reason = "did not answer in time, or dropped the connection before its answer was whole"
    }
    let causeText = String(describing: cause)
    switch maybeApplied {
    case true?:
      return CofferError(
        .outcomeUnknown,
        "The server \(reason), after a batch was sent to it: the batch may or may not have been applied. "
          + "Read the rows it changes once the server is back to find out; sending it again as it is may apply "
          + "it twice.",
        store: name, underlying: RemoteCause(causeText))
    case false?:
      return CofferError(
        .unavailable,
        "The server \(reason); the batch was not applied. Check that the server runs and the URL names it, "
          + "then try again.",
        store: name, underlying: RemoteCause(causeText))
    case nil:
      return CofferError(
        .unavailable,
        "The server \(reason). Check that the server runs and the URL names it (host, port and path).",
        store: name, underlying: RemoteCause(causeText))
    }
  }

  /// The error a non-2xx answer carries: the server's ``CofferError`` when its body is the API's
  /// error form, else one made from the status.
  static func serverError(_ answer: RemoteTransport.Answer, name: String) -> CofferError {
    if let wire = try? JSONDecoder().decode(WireError.self, from: Data(buffer: answer.body)) {
      var error = wire.cofferError
      error.store = name
      return error
    }
    switch answer.status {
    case 401:
      return CofferError(
        .accessDenied,
        "The server refused the token (none, or one it does not know): set COFFER_TOKEN or "
          + "tokenFile= to a token the server lists.", store: name)
    case 403:
      return CofferError(.accessDenied, "The token lacks the scope this needs.", store: name)
    case 404:
      return CofferError(
        .invalidConfiguration,
        "The server has no Coffer store at this URL's path (HTTP 404): check the path after the port.",
        store: name)
    case 502, 503:
      return CofferError(
        .unavailable, "The server (or a proxy before it) is unavailable (HTTP \(answer.status)); try again.",
        store: name)
    case 504:
      return CofferError(.timedOut, "A proxy before the server timed out (HTTP 504).", store: name)
    default:
      return CofferError(
        .backendFailure, "The server answered HTTP \(answer.status) without a Coffer error.", store: name)
    }
  }

  static func encode<Request: Encodable>(_ request: Request) throws -> ByteBuffer {
    do {
      return ByteBuffer(data: try JSONEncoder().encode(request))
    } catch let error as CofferError {
      throw error
    } catch {
      throw CofferError(
        .invalidValue, "A request could not be written as JSON (a value no store holds, such as NaN).")
    }
  }

  static func decode<Answer: Decodable>(_ type: Answer.Type, from body: ByteBuffer, name: String) throws
    -> Answer
  {
    // Rows, what the server sends most, are read by hand; anything else, or rows the hand
    // reader does not take, by `JSONDecoder`.
    if type == WireRows.self,
      let rows = body.withUnsafeReadableBytes({ WireRowsJSON.read($0) }) as? Answer
    {
      return rows
    }
    do {
      return try JSONDecoder().decode(type, from: Data(buffer: body))
    } catch {
      throw CofferError(
        .backendFailure,
        "The server's answer is not what this client reads: client and server may be of different Coffer "
          + "versions, or the URL names something else than a Coffer server.",
        store: name)
    }
  }
}

/// What went wrong on the way to the server, as text (the HTTP library's errors are not all
/// `Sendable`).
struct RemoteCause: Error, Sendable, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
