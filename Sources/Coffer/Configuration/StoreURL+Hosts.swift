import Foundation

extension StoreURL {
  /// One server a network store's URL names: a host name or address, and its port when the URL
  /// gives one.
  ///
  /// `postgres://app@db1:5432,db2/chat` names `db1` port 5432 and `db2` with no port (the
  /// backend's default). An IPv6 address keeps its brackets, as in the URL: `[::1]`.
  public struct Host: Sendable, Hashable, CustomStringConvertible {
    /// The host name or address.
    public var name: String
    /// The port, or `nil` when the URL gives none.
    public var port: Int?

    /// A host, with a port or without.
    public init(_ name: String, port: Int? = nil) {
      self.name = name
      self.port = port
    }

    /// `name:port`, or the name alone: the host as the URL writes it, with what a host may not
    /// hold as it is (a control character, a comma, …) percent-encoded, so that it parses back.
    public var description: String {
      // Colons and brackets stand as they are only in a bracketed IPv6 address.
      let bracketed = name.hasPrefix("[") && name.hasSuffix("]")
      let allowed = bracketed ? Self.writable : Self.writable.subtracting(CharacterSet(charactersIn: ":[]"))
      let written = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
      return port.map { "\(written):\($0)" } ?? written
    }

    /// What a host name is written with as it is: a URL host's characters, less the comma that
    /// separates the hosts of a list.
    private static let writable = CharacterSet.urlHostAllowed.subtracting(CharacterSet(charactersIn: ","))
  }

  /// The hosts after the first of a URL whose authority lists several (`u@h1:p1,h2:p2/db`), and
  /// the URL's text with only the first, for Foundation to parse; `nil` when it lists one or none.
  ///
  /// Each further host is parsed alone with Foundation's rules for a URL's host and port, so a
  /// host that would be refused first in the list is refused anywhere in it.
  static func hostList(
    in text: String, after colon: String.Index, fail: (String) -> CofferError
  ) throws -> (firstHostOnly: String, others: [Host])? {
    let afterColon = text.index(after: colon)
    guard text[afterColon...].hasPrefix("//") else { return nil }
    let start = text.index(afterColon, offsetBy: 2)
    let end = text[start...].firstIndex(where: { "/?#".contains($0) }) ?? text.endIndex
    // A password may hold a comma: the hosts start after the last '@' of the authority.
    let hostStart = text[start..<end].lastIndex(of: "@").map { text.index(after: $0) } ?? start
    let entries = text[hostStart..<end].split(separator: ",", omittingEmptySubsequences: false)
    guard entries.count > 1 else { return nil }
    var others: [Host] = []
    for (offset, entry) in entries.enumerated() {
      let number = offset + 1
      guard !entry.isEmpty else { throw fail("host \(number) of its host list is empty") }
      guard offset > 0 else { continue }
      guard let parsed = URLComponents(string: "\(text[..<colon])://\(entry)"), parsed.user == nil,
        parsed.path.isEmpty, let name = parsed.host, !name.isEmpty
      else {
        throw fail("host \(number) of its host list, '\(entry)', is not a host or host:port")
      }
      if let port = parsed.port, !(1...65535).contains(port) {
        throw fail("port \(port) of host \(number) is out of range")
      }
      others.append(Host(name, port: parsed.port))
    }
    return (String(text[..<hostStart] + entries[0] + text[end...]), others)
  }
}
