@_spi(Backend) import Coffer
import Logging
import NIOCore
import PostgresNIO

extension PostgresConnectionPool {
  /// What one server answered when asked for a connection.
  private enum Answer {
    /// It logged in and accepts writes: the connection to use.
    case primary(PostgresConnection)
    /// It logged in but is a standby (in recovery): no writes there.
    case standby
    /// It could not be reached, or refused the login.
    case failed(any Error)
  }

  /// Opens a connection: to the server, or, with several, to the first that accepts writes,
  /// trying first the one that did last time, then the others in the URL's order. The pool of a
  /// server's reads (``Target/server(_:)``) connects to its server, whatever it is.
  ///
  /// Each server gets ``PostgresBackend/Configuration/connectTimeout`` to connect, log in and
  /// answer whether it is in recovery; a standby is skipped. So after the primary fails and a
  /// standby is promoted, the next connection finds the new primary, and the store carries on.
  ///
  /// - Throws: with one server, its error; with several and none that accepts writes, a refusal
  ///   that a person must fix (a wrong password, a missing database) when a server gave one,
  ///   otherwise ``Coffer/CofferError/Code/unavailable`` naming every server and why it was
  ///   passed over.
  func open(id: Int, while action: String) async throws -> PostgresConnection {
    if case .server(let index) = target {
      do {
        return try await PostgresConnection.connect(
          configuration: connectionConfigurations[index], id: id, logger: .disabled)
      } catch {
        throw failure.error(error, while: action, on: hosts.all[index])
      }
    }
    guard hosts.areSeveral else {
      do {
        return try await PostgresConnection.connect(
          configuration: connectionConfigurations[0], id: id, logger: .disabled)
      } catch {
        throw failure.error(error, while: action)
      }
    }
    var passedOver: [String] = []
    var refusal: CofferError?
    var cause: (any Error & Sendable)?
    for index in hosts.order() {
      let host = hosts.all[index]
      switch await ask(index, id: id) {
      case .primary(let connection):
        if hosts.prefer(index) {
          logger.info(
            "Connected to another server of the store: it accepts writes",
            metadata: ["coffer.address": .string(host.description)])
        }
        return connection
      case .standby:
        passedOver.append("\(host) (a standby, in recovery)")
      case .failed(let error):
        let failed = failure.error(error, while: action, on: host)
        if failed.code != .unavailable, refusal == nil { refusal = failed }
        cause = cause ?? failed.underlying
        passedOver.append("\(host) (\(PostgresFailure.briefly(error)))")
      }
    }
    if let refusal { throw refusal }
    throw CofferError(
      .unavailable,
      "No server of database '\(configuration.database)' accepts writes while \(action): "
        + passedOver.joined(separator: ", ") + ". Calls fail until one of them is a primary again (a standby "
        + "promoted, or the primary back); nothing of an unfinished batch was applied.",
      store: failure.store, underlying: cause)
  }

  /// Connects to one server and asks it whether it is in recovery, all within the connect
  /// timeout: a server that stops answering after the login is closed when the time is up.
  ///
  /// The question runs in a task of its own, racing a timer; whichever ends first decides, under
  /// one lock. So a connection the timer closed is never handed out, and a question that never
  /// completes (a statement sent on a connection that is closing may not) never holds the caller.
  private func ask(_ index: Int, id: Int) async -> Answer {
    let configuration = connectionConfigurations[index]
    let deadline = NIODeadline.now() + configuration.options.connectTimeout
    let connection: PostgresConnection
    do {
      connection = try await PostgresConnection.connect(
        configuration: configuration, id: id, logger: .disabled)
    } catch {
      return .failed(error)
    }
    let timeout = ChannelError.connectTimeout(configuration.options.connectTimeout)
    let recovering = await withCheckedContinuation { continuation in
      let answer = FirstAnswer<Bool>(continuation)
      let timer = connection.eventLoop.scheduleTask(deadline: deadline) {
        if answer.give(.failure(timeout)) { connection.close().whenComplete { _ in } }
      }
      Task {
        await answer.give { try await Self.isInRecovery(connection) }
        timer.cancel()
      }
    }
    switch recovering {
    case .success(false):
      return .primary(connection)
    case .success(true):
      try? await connection.close()
      return .standby
    case .failure(let error):
      try? await connection.close()
      return .failed(error)
    }
  }

  /// Whether the server of `connection` is a standby.
  private static func isInRecovery(_ connection: PostgresConnection) async throws -> Bool {
    var recovering = true
    for try await row in try await connection.send("SELECT pg_is_in_recovery()", logger: .disabled) {
      recovering = try row.decode(Bool.self)
    }
    return recovering
  }
}
