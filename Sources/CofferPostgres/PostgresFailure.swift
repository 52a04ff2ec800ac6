@_spi(Backend) import Coffer
import NIOCore
import PostgresNIO

/// What the server said when it refused a statement, kept as the cause of a ``Coffer/CofferError``:
/// the SQLSTATE and, except for data and constraint errors (whose messages may quote a stored
/// value), the server's message. Never the statement's bound values.
public struct PostgresServerError: Error, Sendable, CustomStringConvertible {
  /// The five-character SQLSTATE, such as `23505` for a unique violation.
  public let sqlState: String
  /// The server's message, when it cannot contain a value.
  public let message: String?

  /// `SQLSTATE 42501: permission denied for schema app`, or the SQLSTATE alone.
  public var description: String {
    message.map { "SQLSTATE \(sqlState): \($0)" } ?? "SQLSTATE \(sqlState)"
  }
}

/// Turns what postgres-nio throws into ``Coffer/CofferError``s that name the server
/// (`host:port`), the database and what to do; never the password or a value.
struct PostgresFailure {
  let configuration: PostgresBackend.Configuration
  let store: String
  /// The servers; messages name the one in use (or the one a failed connection went to).
  let hosts: PostgresHosts

  init(configuration: PostgresBackend.Configuration, store: String, hosts: PostgresHosts? = nil) {
    self.configuration = configuration
    self.store = store
    self.hosts = hosts ?? PostgresHosts(configuration)
  }

  /// SQLSTATEs that mean "run the whole transaction again": a serialization failure and a deadlock.
  static let retryable: Set<String> = ["40001", "40P01"]

  /// The SQLSTATE of a server error, if the error is one.
  static func sqlState(of error: any Error) -> String? {
    guard let error = error as? PSQLError, error.code == .server else { return nil }
    return error.serverInfo?[.sqlState]
  }

  /// Whether the error means the connection is gone (it must not go back into the pool).
  static func isConnectionLoss(_ error: any Error) -> Bool {
    if let error = error as? CofferError { return error.code == .unavailable }
    guard let error = error as? PSQLError else { return error is ChannelError || error is IOError }
    switch error.code {
    case .server:
      // The server ends the session: shutdown, crash recovery, terminated backend.
      let state = error.serverInfo?[.sqlState] ?? ""
      return state.hasPrefix("57P") || state.hasPrefix("08")
    case .queryCancelled, .tooManyParameters, .invalidCommandTag: return false
    default: return true
    }
  }

  /// Whether a connection that failed with this error must be closed rather than reused: it
  /// is lost, or the server refused a statement for a reason that may have come while the
  /// statement was being prepared (a timeout, a lock, a deadlock, a missing table). postgres-nio
  /// remembers a failed preparation for the rest of the connection's life and fails every
  /// later use of that statement with the same error; a new connection prepares it afresh.
  /// Data and constraint errors (classes 22 and 23) come only when a statement runs, and
  /// Coffer's own errors say nothing about the connection.
  static func retiresConnection(_ error: any Error) -> Bool {
    if error is CofferError { return isConnectionLoss(error) }
    guard let failure = error as? PSQLError, failure.code == .server else { return isConnectionLoss(error) }
    let state = failure.serverInfo?[.sqlState] ?? ""
    return !(state.hasPrefix("22") || state.hasPrefix("23"))
  }

  /// What a read throws for `error`: the task's cancellation as it is (`CancellationError`,
  /// which the client throws when the task that waits for an answer is cancelled), anything
  /// else as ``error(_:while:entity:on:)`` makes it.
  func surfaced(_ error: any Error, while action: String, entity: String? = nil) -> any Error {
    if error is CancellationError { return error }
    return self.error(error, while: action, entity: entity)
  }

  /// The error for a failure while doing `action` ("opening the store", "applying a batch", …)
  /// on `host` (by default the server in use).
  func error(
    _ error: any Error, while action: String, entity: String? = nil,
    on host: PostgresBackend.Configuration.Host? = nil
  ) -> CofferError {
    if let error = error as? CofferError { return error.inStore(store) }
    let address = (host ?? hosts.current).description
    let server = "the PostgreSQL server at \(address)"
    let database = "database '\(configuration.database)'"
    func make(_ code: CofferError.Code, _ message: String, _ cause: (any Error & Sendable)? = nil)
      -> CofferError
    {
      CofferError(code, message, store: store, entity: entity, underlying: cause)
    }
    guard let error = error as? PSQLError else {
      if error is ChannelError || error is IOError {
        return make(
          .unavailable,
          "Nothing answered at \(address) while \(action) (\(Self.networkReason(error))). Check "
            + "that the server is running and listens there; nothing of an unfinished batch was applied.")
      }
      return make(.backendFailure, "Talking to \(server) failed while \(action): \(type(of: error)).")
    }
    switch error.code {
    case .server:
      return serverError(error, while: action, entity: entity, server: server)
    case .sslUnsupported:
      return make(
        .unavailable,
        "The URL asks for TLS (tls=require), but \(server) does not offer it. Enable ssl on the server, or "
          + "use tls=prefer or tls=disable on a trusted network.")
    case .failedToAddSSLHandler, .receivedUnencryptedDataAfterSSLRequest:
      return make(.unavailable, "TLS with \(server) failed while \(action). Check the server's TLS set-up.")
    case .authMechanismRequiresPassword:
      return make(
        .accessDenied,
        "\(server) asks role '\(configuration.user)' for a password and none was given. Put it in the "
          + "PGPASSWORD environment variable (or the URL).")
    case .unsupportedAuthMechanism, .saslError:
      return make(
        .accessDenied,
        "\(server) refused the login of role '\(configuration.user)' to \(database) (authentication failed). "
          + "Check the role and its password.")
    case .connectionError:
      let reason = error.underlying.map(Self.networkReason) ?? "no connection"
      return make(
        .unavailable,
        "Could not connect to \(server) while \(action) (\(reason)). Check that the server is running and "
          + "accepts TCP connections there.")
    case .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed:
      return make(
        .unavailable,
        "The connection to \(server) was lost while \(action). A batch that was not acknowledged was not "
          + "applied; the next call opens a new connection.")
    case .queryCancelled:
      return make(.timedOut, "A statement on \(server) was cancelled while \(action).")
    default:
      return make(.backendFailure, "Talking to \(server) failed while \(action) (\(error.code)).")
    }
  }

  private func serverError(_ error: PSQLError, while action: String, entity: String?, server: String)
    -> CofferError
  {
    let state = error.serverInfo?[.sqlState] ?? "?????"
    let quotesValues = state.hasPrefix("22") || state.hasPrefix("23")
    let cause = PostgresServerError(
      sqlState: state, message: quotesValues ? nil : error.serverInfo?[.message])
    func make(_ code: CofferError.Code, _ message: String) -> CofferError {
      CofferError(code, message, store: store, entity: entity, underlying: cause)
    }
    switch state {
    case "28P01", "28000":
      return make(
        .accessDenied,
        "\(server) refused the login of role '\(configuration.user)' to database '\(configuration.database)': "
          + "wrong password, unknown role, or no pg_hba.conf entry for this client. Check PGPASSWORD (or the URL)."
      )
    case "3D000":
      return make(
        .invalidConfiguration,
        "There is no database '\(configuration.database)' on \(server). Create it (createdb "
          + "\(configuration.database)) or name an existing one in the URL.")
    case "42501":
      return make(
        .accessDenied,
        "Role '\(configuration.user)' lacks a privilege needed while \(action) in schema "
          + "'\(configuration.schema)' of database '\(configuration.database)'. Grant it, or use another role."
      )
    case "57014":
      return make(
        .timedOut,
        "A statement ran past the time limit while \(action) and the server cancelled it; nothing of it was "
          + "applied. Raise statementTimeout in the URL or narrow the query.")
    case "53100":
      return make(
        .storageFull, "\(server) is out of disk space while \(action); nothing of the batch was applied.")
    case "53300", "53200", "57P01", "57P02", "57P03", "25006":
      let why =
        switch state {
        case "53300": "it has no connection slots left"
        case "53200": "it is out of memory"
        case "25006": "it is a standby that accepts no writes"
        default: "it is shutting down, starting up or recovering"
        }
      return make(
        .unavailable,
        "\(server) could not serve the store while \(action): \(why). Try again later; nothing of an "
          + "unfinished batch was applied.")
    case "40001", "40P01":
      return make(
        .locked,
        "Concurrent writers on \(server) kept conflicting with this batch (serialization failure or deadlock) "
          + "after several retries; nothing of it was applied. Try again.")
    default:
      return make(.backendFailure, "\(server) refused a statement while \(action) (SQLSTATE \(state)).")
    }
  }

  /// A few words on why a server could not give a connection, for a message that lists several
  /// servers: "connection refused", "it is starting up or recovering", "SQLSTATE 28P01".
  static func briefly(_ error: any Error) -> String {
    guard let error = error as? PSQLError else { return networkReason(error) }
    switch error.code {
    case .server:
      let state = error.serverInfo?[.sqlState] ?? "?????"
      switch state {
      case "57P03": return "it is starting up or recovering"
      case "57P01", "57P02": return "it is shutting down"
      case "53300": return "it has no connection slots left"
      case "28P01", "28000": return "it refused the login"
      case "3D000": return "it has no such database"
      default: return "SQLSTATE \(state)"
      }
    case .connectionError:
      return error.underlying.map(networkReason) ?? "no connection"
    case .serverClosedConnection, .uncleanShutdown:
      return "the connection was cut"
    default:
      return "\(error.code)"
    }
  }

  /// A short reason for a network error, without addresses it might quote twice.
  static func networkReason(_ error: any Error) -> String {
    if let error = error as? ChannelError, case .connectTimeout = error { return "the connection timed out" }
    if let error = error as? IOError {
      return error.errnoCode == ECONNREFUSED ? "connection refused" : "\(error)"
    }
    if let error = error as? PSQLError { return "\(error.code)" }
    let text = "\(error)"
    if text.contains("connectionRefused") || text.contains("Connection refused") {
      return "connection refused"
    }
    return text.count < 120 ? text : String(text.prefix(120))
  }
}
