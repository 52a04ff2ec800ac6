@_spi(Backend) import Coffer
import CofferWire
import Hummingbird
import Logging
import NIOCore

/// One authenticated request on its way to a handler.
struct Call: Sendable {
  let request: Request
  let store: Store
  let grant: Grant
  /// The body, read and checked against the limits.
  let body: ByteBuffer

  /// The store's name in errors.
  var storeName: String { store.backend.name }

  /// Refuses an entity the token may not name, and the server's own idempotency entity.
  func check(entity: String) throws {
    if entity == IdempotencyMemory.entity {
      throw CofferError(
        .unknownEntity,
        "Entity '\(entity)' is the server's own and cannot be read or written through the API.",
        store: storeName, entity: entity)
    }
    guard grant.allows(entity: entity) else {
      throw Forbidden(
        error: CofferError(
          .accessDenied, "This token may not use entity '\(entity)'. Use a token whose entities list it.",
          store: storeName, entity: entity))
    }
  }
}

/// A request whose token lacks a scope or an entity: 403.
struct Forbidden: Error {
  let error: CofferError
}

extension ServerState {
  /// Authenticates, finds the store, reads the body, runs the handler and turns every failure
  /// into a ``WireError`` with its status.
  func respond(
    _ request: Request, _ context: BasicRequestContext, scope: CofferServer.Scope, readsBody: Bool = false,
    _ handler: (Call) async throws -> Response
  ) async -> Response {
    let start = ContinuousClock.now
    let response = await answer(request, context, scope: scope, readsBody: readsBody, handler)
    let elapsed = ContinuousClock.now - start
    // Method, path, status and duration: never a header, query value or body, so no token or
    // stored value reaches the log.
    logger.info(
      "Answered a request",
      metadata: [
        "http.request.method": .string(request.method.rawValue),
        "url.path": .string(String(request.uri.path.prefix(200))),
        "http.response.status_code": .stringConvertible(response.status.code),
        "coffer.duration_ms": .stringConvertible(Double(elapsed.nanoseconds) / 1e6),
      ])
    return response
  }

  private func answer(
    _ request: Request, _ context: BasicRequestContext, scope: CofferServer.Scope, readsBody: Bool,
    _ handler: (Call) async throws -> Response
  ) async -> Response {
    do {
      let grant = try grant(for: request)
      guard grant.allows(scope) else {
        throw Forbidden(
          error: CofferError(
            .accessDenied,
            "This route needs the \(scope.rawValue) scope, which this token does not have. Use a token with it."
          ))
      }
      let store = try await store(for: context)
      let body = readsBody ? try await body(of: request) : ByteBuffer()
      return try await handler(Call(request: request, store: store, grant: grant, body: body))
    } catch {
      return failure(error)
    }
  }

  /// The answer for a failure: the status its code maps to, and the error as JSON.
  func failure(_ error: any Error) -> Response {
    let status: HTTPResponse.Status
    let coffer: CofferError
    var headers: HTTPFields = [.contentType: "application/json"]
    switch error {
    case let error as Unauthorized:
      status = .unauthorized
      coffer = CofferError(.accessDenied, error.message)
      headers[.wwwAuthenticate] = "Bearer"
    case let error as Forbidden:
      status = .forbidden
      coffer = error.error
    case let error as KeyReused:
      status = .unprocessableContent
      coffer = error.error
    case let error as TooLarge:
      status = .contentTooLarge
      coffer = CofferError(
        .invalidInput,
        "The request body is larger than this server's limit of \(error.limit) bytes. Send smaller batches.")
    case is BodyTimedOut:
      status = .requestTimeout
      coffer = CofferError(.timedOut, "The request body did not arrive in time.")
    case let error as CofferError:
      status = Self.status(for: error.code)
      coffer = error
    default:
      status = .internalServerError
      coffer = CofferError(.backendFailure, "The server failed to answer this request; its log says more.")
      logger.error(
        "A request failed", metadata: ["coffer.error.type": .string(String(describing: type(of: error)))])
    }
    let body: Response
    do {
      body = try json(WireError(coffer), status: status)
    } catch {
      return Response(status: .internalServerError)
    }
    return Response(status: status, headers: headers, body: body.body)
  }

  /// The HTTP status for an error code.
  static func status(for code: CofferError.Code) -> HTTPResponse.Status {
    switch code {
    case .invalidQuery, .invalidValue, .valueOutOfRange, .invalidSchema, .invalidInput, .decodingFailed,
      .unsupported, .invalidURL, .unknownScheme:
      .badRequest
    case .accessDenied: .forbidden
    case .unknownEntity, .notFound: .notFound
    case .duplicateID, .uniqueViolation, .referenceViolation, .conflict, .schemaMismatch, .notEmpty,
      .changeVetoed,
      .invalidConfiguration:
      .conflict
    case .changesTrimmed: .gone
    case .unavailable, .closed, .locked: .serviceUnavailable
    case .timedOut: .gatewayTimeout
    default: .internalServerError
    }
  }
}
