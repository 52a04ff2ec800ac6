import Coffer
import Foundation
import Hummingbird
import Synchronization

/// A header's name (HTTPTypes' `HTTPField.Name`, which Hummingbird does not export by name).
typealias HeaderName = HTTPFields.Element.Name

extension CofferServer {
  /// The browser viewer a server serves at `/ui` beside its API: what `coffer serve --ui` and
  /// `coffer ui` turn on.
  ///
  /// A browser logs in once — with a bearer token typed into the login form, or with the
  /// one-time token of the link `coffer ui` prints — and gets a session cookie (`HttpOnly`,
  /// `SameSite=Strict`) in exchange, so no token stays in a URL. The page's script then calls
  /// the same JSON API every client uses, with the cookie and a per-session CSRF header; a
  /// cookie without that header changes nothing. The session has the scopes of the token it
  /// was made from: without the write scope, nothing on the page can change data.
  ///
  /// The viewer serves one store (``CofferServer/Stores/single(_:)``).
  public final class Viewer: Sendable {
    /// A browser's login.
    struct Session: Sendable {
      let grant: Grant
      let csrf: String
      var lastUsed: ContinuousClock.Instant
    }

    /// How long an unused session lasts.
    public let sessionLifetime: Duration
    let sessions = Mutex<[String: Session]>([:])
    /// The one-time login token and what the session it makes may do; `nil` once used.
    let oneTime: Mutex<(secret: String, grant: Grant)?>

    /// A viewer.
    ///
    /// - Parameters:
    ///   - oneTimeToken: A secret that logs one browser in once (the link `coffer ui` prints), or
    ///     `nil` to log in only with the server's bearer tokens.
    ///   - oneTimeScopes: What the session the one-time token makes may do.
    ///   - sessionLifetime: How long a session lasts without a request.
    public init(
      oneTimeToken: String? = nil, oneTimeScopes: Set<Scope> = [.read, .write],
      sessionLifetime: Duration = .seconds(12 * 3600)
    ) {
      self.sessionLifetime = sessionLifetime
      self.oneTime = Mutex(oneTimeToken.map { ($0, Grant(scopes: oneTimeScopes, entities: nil)) })
    }

    /// A new random secret: 32 bytes from the system's secure generator, as hex.
    public static func randomSecret() -> String {
      var generator = SystemRandomNumberGenerator()
      return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }
        .joined()
    }

    /// The cookie that carries a session: `coffer_session_PORT`, so that viewers on several
    /// ports of one host (whose cookies a browser shares) keep their sessions apart.
    static func cookieName(for request: Request) -> String {
      let authority = request.head.authority ?? header("host", of: request) ?? ""
      guard let colon = authority.lastIndex(of: ":") else { return "coffer_session" }
      let port = authority[authority.index(after: colon)...]
      guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber) else {
        return "coffer_session"
      }
      return "coffer_session_" + port
    }
    /// The header a session's writes must carry.
    static let csrfHeader = "x-coffer-csrf"

    /// The value of a request's header (the first, when there are several).
    static func header(_ name: String, of request: Request) -> String? {
      request.headers.first { $0.name.canonicalName == name }?.value
    }

    /// Whether the browser says a request comes from another site (`Sec-Fetch-Site`).
    static func isCrossSite(_ request: Request) -> Bool {
      guard let site = header("sec-fetch-site", of: request) else { return false }
      return site != "same-origin" && site != "none"
    }

    /// Logs in with the one-time token: the grant it carries, once.
    func redeem(oneTime presented: Substring) -> Grant? {
      oneTime.withLock { oneTime in
        guard let current = oneTime,
          TokenCheck.grant(
            for: presented, among: [Token(secret: current.secret, scopes: current.grant.scopes)]) != nil
        else { return nil }
        oneTime = nil
        return current.grant
      }
    }

    /// A new session for `grant`: its id (the cookie's value).
    func open(_ grant: Grant) -> String {
      let id = Self.randomSecret()
      let now = ContinuousClock.now
      sessions.withLock { sessions in
        sessions = sessions.filter { now - $0.value.lastUsed < sessionLifetime }
        if sessions.count >= 10_000, let oldest = sessions.min(by: { $0.value.lastUsed < $1.value.lastUsed })
        {
          sessions.removeValue(forKey: oldest.key)
        }
        sessions[id] = Session(grant: grant, csrf: Self.randomSecret(), lastUsed: now)
      }
      return id
    }

    /// Ends a session.
    func close(_ id: String) { _ = sessions.withLock { $0.removeValue(forKey: id) } }

    /// The session id a request's cookie names, if any.
    static func sessionID(in request: Request) -> String? {
      let prefix = cookieName(for: request) + "="
      for header in request.headers[values: .cookie] {
        for pair in header.split(separator: ";") {
          let trimmed = pair.drop { $0 == " " }
          if trimmed.hasPrefix(prefix) { return String(trimmed.dropFirst(prefix.count)) }
        }
      }
      return nil
    }

    /// The live session a request's cookie names.
    func session(for request: Request) -> (id: String, session: Session)? {
      guard let id = Self.sessionID(in: request) else { return nil }
      let now = ContinuousClock.now
      return sessions.withLock { sessions in
        guard var session = sessions[id] else { return nil }
        guard now - session.lastUsed < sessionLifetime else {
          sessions.removeValue(forKey: id)
          return nil
        }
        session.lastUsed = now
        sessions[id] = session
        return (id, session)
      }
    }

    /// The grant of a request made with a session cookie (and no Authorization header), or
    /// `nil` when it carries no session cookie.
    ///
    /// A request that may change something (any method but GET and HEAD) must also carry the
    /// session's CSRF token in `X-Coffer-CSRF`, which only the viewer's own page can read; and a
    /// browser that says the request comes from another site is refused.
    func grant(for request: Request) throws -> Grant? {
      guard Self.sessionID(in: request) != nil else { return nil }
      guard let (_, session) = session(for: request) else {
        throw Unauthorized(message: "The viewer session has ended or is unknown. Log in again at /ui/login.")
      }
      if Self.isCrossSite(request) {
        throw Forbidden(
          error: CofferError(.accessDenied, "A request from another site cannot use the viewer's session."))
      }
      if request.method != .get && request.method != .head {
        let presented = Self.header(Self.csrfHeader, of: request) ?? ""
        let expected = Token(secret: session.csrf, scopes: [])
        guard TokenCheck.grant(for: Substring(presented), among: [expected]) != nil else {
          throw Forbidden(
            error: CofferError(
              .accessDenied,
              "A write with the viewer's session needs its X-Coffer-CSRF header. Reload the viewer's page."))
        }
      }
      return session.grant
    }

    /// The Set-Cookie value that stores a session in the browser.
    static func cookie(_ id: String, for request: Request) -> String {
      "\(cookieName(for: request))=\(id); Path=/; HttpOnly; SameSite=Strict"
    }

    /// The Set-Cookie value that removes it.
    static func clearedCookie(for request: Request) -> String {
      "\(cookieName(for: request))=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
    }
  }
}
