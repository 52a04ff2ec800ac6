@_spi(Backend) import Coffer
import Foundation

extension PostgresBackend {
  /// Where the server is and how to talk to it: what a `postgres://` URL says.
  ///
  /// ```swift
  /// let url = "postgres://app@db.internal:5432/chat?schema=tenant_7&pool=8&tls=require"
  /// ```
  ///
  /// A URL may name several servers, a primary and its standbys:
  /// `postgres://app@db1:5432,db2:5432/chat`. The backend then opens each connection on the
  /// first of ``hosts`` that accepts writes (trying the one that did last time first), so that
  /// after a standby is promoted the store carries on there. With `?reads=standby` or
  /// `?reads=any` (``reads``), plain reads go to the standbys too; writes never do.
  ///
  /// The password comes from the URL or, when the URL has none, from the `PGPASSWORD`
  /// environment variable. It is never part of ``PostgresBackend/name``, a log line or an error.
  public struct Configuration: Sendable {
    /// Whether connections use TLS.
    public enum TLSMode: String, Sendable, CaseIterable {
      /// Plain TCP only.
      case disable
      /// TLS when the server offers it, plain TCP otherwise.
      case prefer
      /// TLS or no connection.
      case require
    }

    /// One server: a host name or address (an IPv6 address without brackets) and a port.
    public struct Host: Sendable, Hashable, CustomStringConvertible {
      /// The host name or address.
      public var name: String
      /// The port.
      public var port: Int

      /// A server at a host and port.
      public init(_ name: String, port: Int = 5432) {
        self.name = name
        self.port = port
      }

      /// `host:port`, with an IPv6 address in brackets: `[::1]:5432`.
      public var description: String { name.contains(":") ? "[\(name)]:\(port)" : "\(name):\(port)" }
    }

    /// The servers, in the order they are tried: with one, every connection goes to it; with
    /// several, each new connection goes to the first that accepts writes (`pg_is_in_recovery()`
    /// is false), starting with the one that did last time. Never empty.
    public var hosts: [Host]

    /// The first server's host name or address. Setting it changes the first of ``hosts``.
    public var host: String {
      get { hosts.first?.name ?? "" }
      set {
        if hosts.isEmpty { hosts = [Host(newValue)] } else { hosts[0].name = newValue }
      }
    }
    /// The first server's port. Setting it changes the first of ``hosts``.
    public var port: Int {
      get { hosts.first?.port ?? 5432 }
      set {
        if hosts.isEmpty { hosts = [Host("127.0.0.1", port: newValue)] } else { hosts[0].port = newValue }
      }
    }
    /// The role to log in as.
    public var user: String
    /// The role's password, if it needs one. Never printed.
    public var password: String?
    /// The database.
    public var database: String
    /// The PostgreSQL schema (namespace) that holds the store's tables; created when missing.
    public var schema: String
    /// The most connections the backend keeps open at once (reads run concurrently on them;
    /// batches are serialized by the server's row locks, not by the pool).
    public var poolSize: Int
    /// Whether connections use TLS.
    public var tls: TLSMode
    /// How long opening a connection may take before the server is reported unavailable; with
    /// several ``hosts``, the limit for each (connecting, logging in and asking whether it
    /// accepts writes).
    public var connectTimeout: Duration
    /// The server's `statement_timeout` for every statement, or `nil` for the server's own.
    public var statementTimeout: Duration?
    /// Whether every statement's shape and the time until the server answered it are logged at
    /// `info` to the backend's logger — never a value: values are bound parameters. For finding
    /// slow queries. Default `false`.
    public var logStatements = false
    /// Which servers plain reads (gets, queries, counts, aggregates) go to; writes,
    /// transactions and snapshots always go to the primary. Default ``ReadPlacement/primary``.
    public var reads = ReadPlacement.primary
    /// How far behind the primary a standby may be and still serve reads
    /// (``ReadPlacement/standby`` or ``ReadPlacement/any``): one that has not replayed what the
    /// primary had written this long ago is left out until it catches up. Default 5 seconds.
    public var maxStandbyLag = Duration.seconds(5)

    /// A configuration for a server; everything but the address has a default. Set ``hosts`` to
    /// name more servers.
    public init(
      host: String = "127.0.0.1", port: Int = 5432, user: String = "postgres", password: String? = nil,
      database: String = "postgres", schema: String = "public", poolSize: Int = 8, tls: TLSMode = .prefer,
      connectTimeout: Duration = .seconds(10), statementTimeout: Duration? = nil
    ) {
      self.hosts = [Host(host, port: port)]
      self.user = user
      self.password = password
      self.database = database
      self.schema = schema
      self.poolSize = poolSize
      self.tls = tls
      self.connectTimeout = connectTimeout
      self.statementTimeout = statementTimeout
    }

    /// The options a `postgres://` URL may carry.
    static let options: Set<String> = [
      "schema", "pool", "tls", "connectTimeout", "statementTimeout", "logStatements", "reads",
      "maxStandbyLag",
    ]

    /// The configuration a `postgres://` or `postgresql://` URL describes.
    ///
    /// - Parameter environment: where `PGPASSWORD` is looked up when the URL has no password.
    /// - Throws: ``Coffer/CofferError/Code/invalidURL`` naming the option that is not valid.
    @_spi(Backend) public init(
      url: StoreURL, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
      func invalid(_ why: String) -> CofferError {
        CofferError(
          .invalidURL,
          "'\(url)': \(why). Write postgres://USER@HOST:PORT[,HOST:PORT…]/DATABASE?schema=NAME&pool=N&tls=disable|prefer|require"
            + "&connectTimeout=SECONDS&statementTimeout=SECONDS&logStatements=on|off&reads=primary|standby|any"
            + "&maxStandbyLag=SECONDS.",
          store: url.description)
      }
      guard ["postgres", "postgresql"].contains(url.scheme) else {
        throw invalid("the scheme is not postgres")
      }
      try url.checkOptions(allowed: Self.options)
      guard !url.hosts.isEmpty else { throw invalid("it names no host") }
      var database = url.path
      if database.hasPrefix("/") { database.removeFirst() }
      guard !database.isEmpty, !database.contains("/") else {
        throw invalid("it names no database (the path is /DATABASE)")
      }
      self.init(database: database)
      hosts = url.hosts.map { host in
        // The URL writes an IPv6 address in brackets; the connection wants the address alone.
        let bracketed = host.name.hasPrefix("[") && host.name.hasSuffix("]") && host.name.count > 2
        return Host(bracketed ? String(host.name.dropFirst().dropLast()) : host.name, port: host.port ?? 5432)
      }
      user = url.user ?? environment["PGUSER"] ?? "postgres"
      password = url.password ?? environment["PGPASSWORD"]
      if let text = url.option("schema") {
        guard !text.isEmpty, text.utf8.count <= 63, !text.hasPrefix("pg_") else {
          throw invalid("schema must be a name of 1 to 63 bytes that does not start with pg_, not '\(text)'")
        }
        schema = text
      }
      if let text = url.option("pool") {
        guard let count = Int(text), (1...256).contains(count) else {
          throw invalid("pool must be a whole number of connections from 1 to 256, not '\(text)'")
        }
        poolSize = count
      }
      if let text = url.option("tls") {
        guard let mode = TLSMode(rawValue: text.lowercased()) else {
          throw invalid("tls must be disable, prefer or require, not '\(text)'")
        }
        tls = mode
      }
      if let text = url.option("connectTimeout") {
        guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
          throw invalid("connectTimeout must be a number of seconds above 0 and at most 3600, not '\(text)'")
        }
        connectTimeout = .milliseconds(Int64((seconds * 1000).rounded(.up)))
      }
      if let text = url.option("statementTimeout") {
        guard let seconds = Double(text), seconds >= 0, seconds <= 86_400 else {
          throw invalid("statementTimeout must be a number of seconds from 0 to 86400, not '\(text)'")
        }
        statementTimeout = seconds == 0 ? nil : .milliseconds(Int64((seconds * 1000).rounded(.up)))
      }
      if let text = url.option("logStatements") {
        guard let on = StatementLog.switchValue(text) else {
          throw invalid("logStatements must be on or off, not '\(text)'")
        }
        logStatements = on
      }
      try readStandbyOptions(url, invalid)
    }

    /// Where the store is, for messages and ``PostgresBackend/name``: every host and port, the
    /// database and the schema; never the password.
    var storeName: String {
      let schemaPart = schema == "public" ? "" : "?schema=\(schema)"
      return "postgres://\(user)@\(address)/\(database)\(schemaPart)"
    }

    /// `host:port`, or `host:port,host:port` for several servers, for messages.
    var address: String { hosts.map(\.description).joined(separator: ",") }
  }
}

extension PostgresBackend.Configuration: CustomStringConvertible, CustomDebugStringConvertible,
  CustomReflectable
{
  /// The servers, database, schema and options, and whether a password is set; never the
  /// password itself, so that a configuration printed or logged whole gives nothing away.
  public var description: String {
    var parts = [
      "pool \(poolSize)", "tls \(tls.rawValue)", "connectTimeout \(connectTimeout)",
      password == nil ? "no password" : "a password (not shown)",
    ]
    if let statementTimeout { parts.insert("statementTimeout \(statementTimeout)", at: 3) }
    if reads != .primary { parts.insert("reads \(reads.rawValue), maxStandbyLag \(maxStandbyLag)", at: 1) }
    return "\(storeName) (\(parts.joined(separator: ", ")))"
  }

  /// The same as ``description``.
  public var debugDescription: String { description }

  /// Every setting but the password, whose place says only whether one is set: what `dump`
  /// and other reflection show.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "hosts": hosts, "user": user, "password": password == nil ? "none" : "(set, not shown)",
        "database": database, "schema": schema, "poolSize": poolSize, "tls": tls,
        "connectTimeout": connectTimeout, "statementTimeout": statementTimeout as Any, "reads": reads,
        "maxStandbyLag": maxStandbyLag,
      ], displayStyle: .struct)
  }
}
