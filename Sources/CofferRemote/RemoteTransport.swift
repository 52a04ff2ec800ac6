import AsyncHTTPClient
@_spi(Backend) import Coffer
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// The HTTP hop of a ``RemoteBackend``: one `HTTPClient` with its connection pool, the bearer
/// token, and the rule that sorts a failed request into "never sent" and "sent, answer lost".
///
/// Connection attempts are not retried by the client library (its pool would hold a request
/// until the connect timeout and then fail it with the same error): a request that cannot get a
/// connection fails at once as never sent, and the backend decides whether to send it again.
final class RemoteTransport: Sendable {
  /// An answer: its status and its whole body.
  struct Answer: Sendable {
    var status: Int
    var body: ByteBuffer
  }

  /// Why a request has no answer.
  enum Lost: Error {
    /// It never left this process: no connection could be made. Nothing reached the server.
    case notSent(any Error)
    /// It was sent (or may have been), and no whole answer came back: the server may have acted
    /// on it.
    case answerLost(any Error)
  }

  let configuration: RemoteBackend.Configuration
  let store: String
  let client: HTTPClient
  private let authorization: String?
  /// The most bytes an answer may have: a bound against a runaway server.
  let answerLimit = 1 << 30

  init(configuration: RemoteBackend.Configuration, store: String) {
    self.configuration = configuration
    self.store = store
    self.authorization = configuration.token.map { "Bearer " + $0 }
    var settings = HTTPClient.Configuration()
    settings.timeout = HTTPClient.Configuration.Timeout(
      connect: .nanoseconds(configuration.connectTimeout.nanoseconds),
      read: .nanoseconds(configuration.requestTimeout.nanoseconds))
    settings.decompression = .disabled
    settings.redirectConfiguration = .disallow
    settings.connectionPool.retryConnectionEstablishment = false
    settings.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = configuration.connections
    settings.httpVersion = .http1Only
    self.client = HTTPClient(
      eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: settings)
  }

  /// Sends one request and reads its whole answer.
  ///
  /// - Throws: ``Lost`` when no whole answer came; `CancellationError` when the task was
  ///   cancelled.
  func send(
    _ method: HTTPMethod, _ path: String, body: ByteBuffer? = nil, headers extra: [(String, String)] = [],
    timeout: Duration? = nil
  ) async throws -> Answer {
    let request = makeRequest(method, path, body: body, headers: extra)
    let deadline = NIODeadline.now() + .nanoseconds((timeout ?? configuration.requestTimeout).nanoseconds)
    let response: HTTPClientResponse
    do {
      response = try await client.execute(request, deadline: deadline)
    } catch {
      try Task.checkCancellation()
      throw Self.wasSent(error) ? Lost.answerLost(error) : Lost.notSent(error)
    }
    do {
      let body = try await response.body.collect(upTo: answerLimit)
      return Answer(status: Int(response.status.code), body: body)
    } catch {
      try Task.checkCancellation()
      throw Lost.answerLost(error)
    }
  }

  /// Sends a request whose answer is a stream, and hands back the response as soon as its head
  /// has come: the change feed's events.
  func open(_ path: String, headers extra: [(String, String)] = [], timeout: Duration) async throws
    -> HTTPClientResponse
  {
    let request = makeRequest(.GET, path, body: nil, headers: extra)
    do {
      return try await client.execute(request, deadline: .now() + .nanoseconds(timeout.nanoseconds))
    } catch {
      try Task.checkCancellation()
      throw Self.wasSent(error) ? Lost.answerLost(error) : Lost.notSent(error)
    }
  }

  func makeRequest(_ method: HTTPMethod, _ path: String, body: ByteBuffer?, headers extra: [(String, String)])
    -> HTTPClientRequest
  {
    var request = HTTPClientRequest(url: configuration.origin + configuration.pathPrefix + path)
    request.method = method
    if let authorization { request.headers.add(name: "Authorization", value: authorization) }
    request.headers.add(name: "Accept", value: "application/json")
    for (name, value) in extra { request.headers.add(name: name, value: value) }
    if let body {
      request.headers.add(name: "Content-Type", value: "application/json")
      request.body = .bytes(body)
    }
    return request
  }

  /// Whether a failed request may have reached the server: everything but a failure to connect.
  static func wasSent(_ error: any Error) -> Bool {
    if let error = error as? HTTPClientError {
      return
        !(error == .connectTimeout || error == .getConnectionFromPoolTimeout || error == .alreadyShutdown
        || error == .invalidURL
        || error == .emptyHost)
    }
    if error is NIOConnectionError { return false }
    if let error = error as? ChannelError, case .connectTimeout = error { return false }
    if let error = error as? IOError {
      switch error.errnoCode {
      case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL: return false
      default: return true
      }
    }
    return true
  }

  /// Whether ``shutdown()`` ran.
  private let isShutDown = LockedState(false)

  /// Closes every connection.
  func shutdown() async {
    let already = isShutDown.withLock { done in
      defer { done = true }
      return done
    }
    if !already { try? await client.shutdown() }
  }

  /// A store dropped without being closed still closes its connections (the client library
  /// requires it), in the background.
  deinit {
    if !isShutDown.withLock({ $0 }) { client.shutdown(queue: .global()) { _ in } }
  }
}
