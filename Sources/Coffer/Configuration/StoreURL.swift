import Foundation

/// A store named by a URL, parsed: which backend (``scheme``) and where.
///
/// | URL | meaning |
/// |---|---|
/// | `memory:` | a fresh in-memory store |
/// | `memory:NAME` | the in-memory store `NAME`, shared inside the process |
/// | `plist:///path/store.plist?format=binary` | a property-list file (`format=xml` too) |
/// | `sqlite:///path/db.sqlite` | an SQLite database file |
/// | `lmdb:///path/dir?mapSize=1GiB` | an LMDB environment directory |
/// | `postgres://user@host:5432/db` | a PostgreSQL database |
/// | `postgres://user@host1:5432,host2:5433/db` | a PostgreSQL database on one of several servers |
///
/// File paths may also be relative: `sqlite:app.sqlite`. Write a space or another reserved
/// character in a path percent-encoded (`%20`); ``path`` holds it decoded. A password in a URL
/// is accepted but never kept in ``description`` or error messages; prefer the environment.
@_spi(Backend) public struct StoreURL: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
  /// The backend's scheme, lowercased: `memory`, `sqlite`, …
  public let scheme: String
  /// The user, for network stores.
  public let user: String?
  /// The password, for network stores. Never printed.
  public let password: String?
  /// The host, for network stores: the first of ``hosts`` when the URL names several.
  public let host: String?
  /// The port, for network stores: the first host's.
  public let port: Int?
  /// Every host the URL names, in order, each with its port when the URL gives one:
  /// `postgres://u@h1:5432,h2:5433/db` names two. The first is ``host`` and ``port``; empty when
  /// the URL names no host.
  public let hosts: [Host]
  /// The path (percent-decoded): a file or directory for file stores, the name for `memory:NAME`,
  /// `/database` for PostgreSQL. Empty when the URL has none.
  public let path: String
  /// The query options (`?format=xml&mapSize=1GiB`), by name.
  public let options: [String: String]

  /// Parses a store URL.
  ///
  /// - Throws: ``CofferError/Code/invalidURL`` for text that is not a URL with a scheme, with a
  ///   message showing the accepted forms.
  public init(_ text: String) throws {
    let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
    func fail(_ why: String) -> CofferError {
      CofferError(
        .invalidURL,
        "'\(StoreURL.redacted(trimmed))' is not a store URL: \(why). Write SCHEME:LOCATION, for example memory:, "
          + "memory:NAME, sqlite:///path/db.sqlite or plist:///path/store.plist?format=xml.")
    }
    guard !trimmed.isEmpty else { throw fail("it is empty") }
    guard !trimmed.contains(where: \.isWhitespace) else {
      throw fail("it contains a space or line break (percent-encode it: %20 for a space)")
    }
    guard let colon = trimmed.firstIndex(of: ":") else { throw fail("it has no scheme (no ':')") }
    let scheme = trimmed[..<colon].lowercased()
    guard let first = scheme.first, first.isLetter,
      scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
    else { throw fail("'\(trimmed[..<colon])' is not a valid scheme name") }
    // Foundation parses one host; a list `h1:p1,h2:p2` is split here, the URL parsed with its
    // first host, and each other host parsed alone by the same rules.
    let list = try Self.hostList(in: trimmed, after: colon, fail: fail)
    guard let components = URLComponents(string: list?.firstHostOnly ?? trimmed) else {
      throw fail("it is malformed (check for spaces or unescaped characters; percent-encode them)")
    }
    var options: [String: String] = [:]
    for item in components.queryItems ?? [] {
      guard !item.name.isEmpty else { throw fail("it has an option with no name") }
      guard options.updateValue(item.value ?? "", forKey: item.name) == nil else {
        throw fail("option '\(item.name)' is given twice")
      }
    }
    if let port = components.port, !(1...65535).contains(port) { throw fail("port \(port) is out of range") }
    self.scheme = scheme
    self.user = components.user.flatMap { $0.isEmpty ? nil : $0 }
    self.password = components.password
    let host = components.host.flatMap { $0.isEmpty ? nil : $0 }
    if list != nil, host == nil { throw fail("host 1 of its host list is empty") }
    self.host = host
    self.port = components.port
    self.hosts = host.map { [Host($0, port: components.port)] + (list?.others ?? []) } ?? []
    self.path = components.path
    self.options = options
  }

  /// A URL from its parts.
  public init(
    scheme: String, path: String = "", host: String? = nil, port: Int? = nil, user: String? = nil,
    password: String? = nil, options: [String: String] = [:]
  ) {
    self.scheme = scheme.lowercased()
    self.path = path
    self.host = host
    self.port = port
    self.hosts = host.map { [Host($0, port: port)] } ?? []
    self.user = user
    self.password = password
    self.options = options
  }

  /// A URL from its parts, for a network store on one of several hosts (the first one is
  /// ``host`` and ``port``).
  public init(
    scheme: String, path: String = "", hosts: [Host], user: String? = nil, password: String? = nil,
    options: [String: String] = [:]
  ) {
    self.scheme = scheme.lowercased()
    self.path = path
    self.host = hosts.first?.name
    self.port = hosts.first?.port
    self.hosts = hosts
    self.user = user
    self.password = password
    self.options = options
  }

  /// The URL's parts, with the password's place saying only whether one is set: what `dump`
  /// and other reflection show.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "scheme": scheme, "user": user as Any, "password": password == nil ? "none" : "(set, not shown)",
        "hosts": hosts, "path": path, "options": options,
      ], displayStyle: .struct)
  }

  /// The URL as text, without its password, percent-encoding what needs it (a space in a path is
  /// `%20`), so that it parses back to the same URL.
  public var description: String {
    var text = scheme + ":"
    if host != nil || user != nil || path.hasPrefix("/") {
      text += "//"
      if let user { text += Self.encoded(user, allowing: .urlUserAllowed) + "@" }
      if hosts.isEmpty, let port {
        text += ":\(port)"
      } else {
        text += hosts.map(\.description).joined(separator: ",")
      }
    }
    text += Self.encoded(path, allowing: .urlPathAllowed)
    if !options.isEmpty {
      let pairs = options.keys.sorted().map { name in
        Self.encoded(name, allowing: .optionAllowed) + "="
          + Self.encoded(options[name] ?? "", allowing: .optionAllowed)
      }
      text += "?" + pairs.joined(separator: "&")
    }
    return text
  }

  /// Percent-encodes what a URL part cannot hold as is, so that ``description`` parses back.
  private static func encoded(_ part: String, allowing allowed: CharacterSet) -> String {
    part.addingPercentEncoding(withAllowedCharacters: allowed) ?? part
  }

  /// The URL with the same scheme, hosts and options but another path.
  @_spi(Backend) public func with(path: String) -> StoreURL {
    if hosts.isEmpty {
      return StoreURL(
        scheme: scheme, path: path, host: host, port: port, user: user, password: password, options: options)
    }
    return StoreURL(
      scheme: scheme, path: path, hosts: hosts, user: user, password: password, options: options)
  }

  /// An option's value, or `nil`.
  @_spi(Backend) public func option(_ name: String) -> String? { options[name] }

  /// Throws if the URL has options other than those listed.
  @_spi(Backend) public func checkOptions(allowed: Set<String>) throws {
    for name in options.keys.sorted() where !allowed.contains(name) {
      let list = allowed.isEmpty ? "none" : allowed.sorted().joined(separator: ", ")
      throw CofferError(
        .invalidURL,
        "'\(self)' has option '\(name)', which \(scheme): stores do not take. Options they take: \(list).",
        store: description)
    }
  }

  /// The path of a store on this machine, for backends whose URLs name a file or a directory.
  ///
  /// - Parameter forms: what the backend's URLs look like, for the error:
  ///   `"SQLite stores are files: sqlite:///absolute/path.sqlite or sqlite:relative.sqlite"`.
  /// - Throws: ``CofferError/Code/invalidURL`` when the URL names a host, a user or a port.
  @_spi(Backend) public func localPath(_ forms: String) throws -> String {
    guard host == nil, user == nil, port == nil else {
      throw CofferError(.invalidURL, "'\(self)' names a host; \(forms).", store: description)
    }
    return path
  }

  static func redacted(_ text: String) -> String {
    if let components = URLComponents(string: text) {
      guard components.password != nil else { return text }
      var copy = components
      copy.password = "***"
      if let string = copy.string { return string }
    }
    // Text URLComponents cannot parse (a bad port, a space): hide what lies between the first
    // ':' and the last '@' of the authority, which is where a password would be.
    guard let start = text.range(of: "://")?.upperBound else { return text }
    let end = text[start...].firstIndex(where: { "/?#".contains($0) }) ?? text.endIndex
    guard let at = text[start..<end].lastIndex(of: "@"), let colon = text[start..<at].firstIndex(of: ":")
    else {
      return text
    }
    return String(text[...colon]) + "***" + String(text[at...])
  }
}

extension CharacterSet {
  /// What an option name or value may hold unencoded: query characters except `&`, `=`, `#`.
  fileprivate static let optionAllowed = CharacterSet.urlQueryAllowed.subtracting(
    CharacterSet(charactersIn: "&=#"))
}
