@_spi(Backend) import Coffer
import Foundation

extension RemoteBackend {
  /// Where the server is, how to prove who is asking, and how long to wait: what a
  /// `coffer+http://` or `coffer+https://` URL says.
  ///
  /// ```swift
  /// // COFFER_TOKEN holds the bearer token.
  /// let url = "coffer+https://data.example.com/chat?timeout=30&retryFor=20"
  /// ```
  ///
  /// The URL's path is a prefix every request is sent under (`/chat/v1/…` above): empty for a
  /// server that serves one store at its root, a store's name for one that serves several or sits
  /// behind a reverse proxy under a path.
  ///
  /// The bearer token comes from ``token`` when it is set, else from the file the URL's
  /// `tokenFile=PATH` option names, else from the `COFFER_TOKEN` environment variable. It is sent
  /// only in the `Authorization` header and is never part of ``RemoteBackend/name``, a log line, an
  /// error or this configuration's description.
  public struct Configuration: Sendable, CustomStringConvertible, CustomReflectable {
    /// `http` or `https`.
    public var scheme: String
    /// The server's host name or address (an IPv6 address without brackets).
    public var host: String
    /// The server's port.
    public var port: Int
    /// The path every request is sent under, without a trailing slash: `""` or `/chat`.
    public var pathPrefix: String
    /// The bearer token, or `nil` for a server that asks for none. Never printed.
    public var token: String?
    /// How long one request may take, from sending it to the last byte of the answer.
    public var requestTimeout: Duration
    /// How long connecting may take before the server is reported unavailable.
    public var connectTimeout: Duration
    /// How long the backend keeps sending a batch again, with the same idempotency key, after
    /// its answer was lost or the server could not be reached, before it gives up and reports
    /// whether the batch was applied or that this cannot be told. Reads are retried as long.
    public var retryFor: Duration
    /// The most connections kept open to the server at once.
    public var connections: Int

    /// A configuration with the defaults: 30 s per request, 5 s to connect, 10 s of retries,
    /// 8 connections.
    public init(
      scheme: String = "http", host: String, port: Int? = nil, pathPrefix: String = "", token: String? = nil
    ) {
      self.scheme = scheme
      self.host = host
      self.port = port ?? (scheme == "https" ? 443 : 80)
      self.pathPrefix = Self.normalized(prefix: pathPrefix)
      self.token = token
      self.requestTimeout = .seconds(30)
      self.connectTimeout = .seconds(5)
      self.retryFor = .seconds(10)
      self.connections = 8
    }

    /// The URL options a `coffer+http(s)://` URL takes.
    static let options: Set<String> = ["timeout", "connectTimeout", "retryFor", "connections", "tokenFile"]

    /// Reads a `coffer+http://HOST[:PORT][/PREFIX]?timeout=S&connectTimeout=S&retryFor=S&connections=N&tokenFile=PATH`
    /// URL; the token from `tokenFile`, else `COFFER_TOKEN` in `environment`.
    ///
    /// - Throws: ``CofferError/Code/invalidURL`` for a missing host, an option it does not know
    ///   or a value it cannot read; ``CofferError/Code/invalidConfiguration`` for a token file
    ///   that cannot be read (its path named, never its content).
    @_spi(Backend) public init(
      url: StoreURL, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
      let store = url.description
      guard url.scheme == "coffer+http" || url.scheme == "coffer+https" else {
        throw CofferError(
          .invalidURL, "'\(store)' is not a coffer+http: or coffer+https: URL.", store: store)
      }
      guard let host = url.host, url.hosts.count == 1 else {
        throw CofferError(
          .invalidURL,
          "'\(store)' names no single server: write coffer+http://HOST:PORT or coffer+https://HOST[:PORT][/PREFIX].",
          store: store)
      }
      if url.user != nil || url.password != nil {
        throw CofferError(
          .invalidURL,
          "'\(store)' carries credentials in the URL, where they would be logged: remove them and give the "
            + "token in COFFER_TOKEN or with tokenFile=PATH.",
          store: store)
      }
      try url.checkOptions(allowed: Self.options)
      self.init(
        scheme: url.scheme == "coffer+https" ? "https" : "http", host: host, port: url.port,
        pathPrefix: url.path)
      func seconds(_ option: String) throws -> Duration? {
        guard let text = url.option(option) else { return nil }
        guard let value = Double(text), value.isFinite, value > 0, value < 86_400 else {
          throw CofferError(
            .invalidURL, "'\(store)': \(option) must be a number of seconds above 0, not '\(text)'.",
            store: store)
        }
        return .milliseconds(Int64((value * 1000).rounded()))
      }
      if let timeout = try seconds("timeout") { requestTimeout = timeout }
      if let timeout = try seconds("connectTimeout") { connectTimeout = timeout }
      if let text = url.option("retryFor") {
        // 0 turns retries off.
        if text == "0" { retryFor = .zero } else if let value = try seconds("retryFor") { retryFor = value }
      }
      if let text = url.option("connections") {
        guard let count = Int(text), (1...1024).contains(count) else {
          throw CofferError(
            .invalidURL, "'\(store)': connections must be a whole number from 1 to 1024, not '\(text)'.",
            store: store)
        }
        connections = count
      }
      if let path = url.option("tokenFile") {
        token = try Self.readToken(at: path, store: store)
      } else if let token = environment["COFFER_TOKEN"], !token.isEmpty {
        self.token = token
      }
    }

    /// The token in a file, without surrounding white space.
    static func readToken(at path: String, store: String) throws -> String {
      let text: String
      do {
        text = try String(contentsOfFile: path, encoding: .utf8)
      } catch {
        throw CofferError(
          .invalidConfiguration,
          "The token file '\(path)' could not be read: check that it exists and that this user may read it.",
          store: store, path: path)
      }
      let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
      guard !token.isEmpty, !token.contains(where: { $0.isNewline }) else {
        throw CofferError(
          .invalidConfiguration,
          "The token file '\(path)' must hold one token on one line; it holds \(token.isEmpty ? "none" : "several lines").",
          store: store, path: path)
      }
      return token
    }

    /// `""` or `/a/b`: a leading slash, no trailing one.
    static func normalized(prefix: String) -> String {
      let parts = prefix.split(separator: "/", omittingEmptySubsequences: true)
      return parts.isEmpty ? "" : "/" + parts.joined(separator: "/")
    }

    /// `http://HOST:PORT/PREFIX`, with an IPv6 address in brackets: where requests go.
    var origin: String {
      let shownHost = host.contains(":") ? "[\(host)]" : host
      return "\(scheme)://\(shownHost):\(port)"
    }

    /// The store's name: `coffer+http://HOST:PORT/PREFIX`, never with the token.
    public var storeName: String {
      "coffer+" + origin + pathPrefix
    }

    /// The store's name and settings, never the token (only whether one is set).
    public var description: String {
      "\(storeName) (token: \(token == nil ? "none" : "set"), timeout: \(requestTimeout), retryFor: \(retryFor))"
    }

    /// The settings, with the token's place saying only whether one is set.
    public var customMirror: Mirror {
      Mirror(
        self,
        children: [
          "scheme": scheme, "host": host, "port": port, "pathPrefix": pathPrefix,
          "token": token == nil ? "none" : "set", "requestTimeout": requestTimeout,
          "connectTimeout": connectTimeout, "retryFor": retryFor, "connections": connections,
        ])
    }
  }
}
