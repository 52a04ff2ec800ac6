import Coffer
public import Foundation

extension CofferServer {
  /// What a token may do.
  public enum Scope: String, Sendable, Hashable, Codable, CaseIterable {
    /// Read schemas, rows, counts, aggregates and the change feed.
    case read
    /// Prepare entities and apply batches (and read).
    case write
    /// Start and trim the change feed.
    case admin
  }

  /// A bearer token the server accepts, with what it may do.
  ///
  /// Its description shows the scopes and entities, never the secret.
  public struct Token: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The secret the client sends as `Authorization: Bearer SECRET`.
    let secret: String
    /// What it may do.
    public var scopes: Set<Scope>
    /// The only entities it may name, or `nil` for every entity.
    public var entities: Set<String>?

    /// A token.
    public init(secret: String, scopes: Set<Scope>, entities: Set<String>? = nil) {
      self.secret = secret
      self.scopes = scopes
      self.entities = entities
    }

    private enum CodingKeys: String, CodingKey { case token, scopes, entities }

    /// Decodes `{"token":"…","scopes":["read"],"entities":["Note"]}`.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      secret = try container.decode(String.self, forKey: .token)
      scopes = try container.decode(Set<Scope>.self, forKey: .scopes)
      entities = try container.decodeIfPresent(Set<String>.self, forKey: .entities)
    }

    /// Encodes the token, secret included (to write a tokens file).
    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(secret, forKey: .token)
      try container.encode(scopes.map(\.rawValue).sorted(), forKey: .scopes)
      try container.encodeIfPresent(entities.map { $0.sorted() }, forKey: .entities)
    }

    /// The scopes and entities; the secret is never shown.
    public var description: String {
      let names = scopes.map(\.rawValue).sorted().joined(separator: ",")
      return "Token(scopes: \(names), entities: \(entities.map { "\($0.count)" } ?? "all"), secret: redacted)"
    }
  }

  /// The tokens a JSON array holds: `[{"token":"…","scopes":["read","write"],"entities":["Note"]}]`.
  ///
  /// - Throws: ``CofferError/Code/invalidConfiguration`` naming what is wrong, never a secret.
  public static func tokens(fromJSON data: Data, source: String) throws -> [Token] {
    let tokens: [Token]
    do {
      tokens = try JSONDecoder().decode([Token].self, from: data)
    } catch {
      throw CofferError(
        .invalidConfiguration,
        "The tokens in \(source) are not a JSON array of {\"token\", \"scopes\", \"entities\"?} objects with "
          + "scopes among read, write and admin.",
        path: source)
    }
    for token in tokens where token.secret.utf8.count < 16 {
      throw CofferError(
        .invalidConfiguration,
        "A token in \(source) is shorter than 16 bytes; use long random tokens (openssl rand -hex 32).",
        path: source)
    }
    return tokens
  }

  /// The tokens a JSON file holds (see ``tokens(fromJSON:source:)``).
  public static func tokens(fromFile path: String) throws -> [Token] {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw CofferError(
        .invalidConfiguration, "The tokens file \(path) cannot be read. Check the path and its permissions.",
        path: path)
    }
    return try tokens(fromJSON: data, source: path)
  }
}

/// What a request's token lets it do.
struct Grant: Sendable {
  var scopes: Set<CofferServer.Scope>
  var entities: Set<String>?

  static let everything = Grant(scopes: Set(CofferServer.Scope.allCases), entities: nil)

  func allows(_ scope: CofferServer.Scope) -> Bool {
    switch scope {
    case .read: !scopes.isDisjoint(with: [.read, .write])
    case .write: scopes.contains(.write)
    case .admin: scopes.contains(.admin)
    }
  }

  func allows(entity: String) -> Bool { entities?.contains(entity) ?? true }
}

/// Compares a presented secret with every token in time that depends only on the lengths of
/// the configured tokens, never on where the first differing byte is.
enum TokenCheck {
  static func grant(for presented: Substring, among tokens: [CofferServer.Token]) -> Grant? {
    let given = Array(presented.utf8)
    var found: Grant?
    for token in tokens {
      let secret = Array(token.secret.utf8)
      var difference = UInt8(given.count == secret.count ? 0 : 1)
      for index in 0..<secret.count {
        difference |= secret[index] ^ (index < given.count ? given[index] : 0)
      }
      if difference == 0 && found == nil { found = Grant(scopes: token.scopes, entities: token.entities) }
    }
    return found
  }
}
