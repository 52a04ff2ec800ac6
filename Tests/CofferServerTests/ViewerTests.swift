@_spi(Backend) import Coffer
import CofferWire
import Foundation
import HTTPTypes
import Testing

@testable import CofferServer

/// The viewer's login, sessions and CSRF check, driven without a socket (the page itself is
/// tested in a browser by Tests/Browser/viewer_browser_test.py, `make test-viewer`).
@Suite("Viewer sessions")
struct ViewerTests {
  static let oneTime = "one-time-token-0123456789abcdef"
  static let csrfHeader = HTTPField.Name("X-Coffer-CSRF")!
  static let fetchSite = HTTPField.Name("Sec-Fetch-Site")!
  static let policyHeader = HTTPField.Name("Content-Security-Policy")!
  static let nosniffHeader = HTTPField.Name("X-Content-Type-Options")!

  static func harness(scopes: Set<CofferServer.Scope> = [.read, .write]) -> ServerHarness {
    ServerHarness { configuration in
      configuration.viewer = CofferServer.Viewer(oneTimeToken: oneTime, oneTimeScopes: scopes)
    }
  }

  /// Logs in with the one-time link: the session cookie's `name=value`.
  static func login(_ client: ServerHarness.Client) async throws -> String {
    let answer = try await client.send(.get, "/ui/login?token=\(oneTime)", token: nil)
    #expect(answer.status == 303)
    #expect(answer.headers[.location] == "/ui")
    let cookie = try #require(answer.headers[.setCookie])
    #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"))
    return String(cookie.prefix { $0 != ";" })
  }

  static func session(_ client: ServerHarness.Client, cookie: String) async throws -> ViewerSession {
    let answer = try await client.send(.get, "/ui/session", token: nil, headers: [.cookie: cookie])
    #expect(answer.status == 200)
    return try answer.decode(ViewerSession.self)
  }

  @Test("the one-time link logs in once, and sends the browser on without the token")
  func oneTimeLink() async throws {
    try await Self.harness().run { client in
      let cookie = try await Self.login(client)
      let again = try await client.send(.get, "/ui/login?token=\(Self.oneTime)", token: nil)
      #expect(again.status == 303)
      #expect(again.headers[.location] == "/ui/login?failed=1")
      #expect(again.headers[.setCookie] == nil)
      let session = try await Self.session(client, cookie: cookie)
      #expect(session.scopes == ["read", "write"])
      #expect(session.csrf.count == 64)
      #expect(!session.csrf.contains(Self.oneTime))
    }
  }

  @Test("a session reads; it writes only with its CSRF header and never from another site")
  func csrf() async throws {
    try await Self.harness().run { client in
      _ = try await client.prepareNotes()
      let cookie = try await Self.login(client)
      let csrf = try await Self.session(client, cookie: cookie).csrf
      let insert = Fixtures.insert([Fixtures.note(1)])
      let bare = try await client.post("/v1/apply", insert, token: nil, headers: [.cookie: cookie])
      #expect(bare.status == 403)
      #expect(bare.code == "accessDenied")
      var wrong: HTTPFields = [.cookie: cookie]
      wrong[Self.csrfHeader] = String(csrf.reversed())
      #expect(try await client.post("/v1/apply", insert, token: nil, headers: wrong).status == 403)
      var crossSite: HTTPFields = [.cookie: cookie]
      crossSite[Self.csrfHeader] = csrf
      crossSite[Self.fetchSite] = "cross-site"
      #expect(try await client.post("/v1/apply", insert, token: nil, headers: crossSite).status == 403)
      let count = try await client.post("/v1/count", WireQuery(Query(entity: "Note")))
      #expect(try count.decode(WireCount.self).count == 0)
      var good: HTTPFields = [.cookie: cookie]
      good[Self.csrfHeader] = csrf
      #expect(try await client.post("/v1/apply", insert, token: nil, headers: good).status == 200)
      let read = try await client.post(
        "/v1/read", WireQuery(Query(entity: "Note")), token: nil, headers: good)
      #expect(try read.decode(WireRows.self).rows.count == 1)
      // A session cookie the server never made, or one logged out: 401.
      let unknown = try await client.send(
        .get, "/v1/store", token: nil,
        headers: [.cookie: "coffer_session=" + String(repeating: "0", count: 64)])
      #expect(unknown.status == 401)
      #expect(try await client.post("/ui/logout", WireEmpty(), token: nil, headers: good).status == 200)
      #expect(try await client.send(.get, "/v1/store", token: nil, headers: [.cookie: cookie]).status == 401)
    }
  }

  @Test("a read-only session can change nothing")
  func readOnly() async throws {
    try await Self.harness(scopes: [.read]).run { client in
      _ = try await client.prepareNotes()
      let cookie = try await Self.login(client)
      let session = try await Self.session(client, cookie: cookie)
      #expect(session.scopes == ["read"])
      var headers: HTTPFields = [.cookie: cookie]
      headers[Self.csrfHeader] = session.csrf
      let write = try await client.post(
        "/v1/apply", Fixtures.insert([Fixtures.note(1)]), token: nil, headers: headers)
      #expect(write.status == 403)
      // Preparing what is stored already changes nothing and is allowed; a new entity is not.
      let other = try EntitySchema(name: "Other", fields: [Field("id", .int)], idField: "id")
      let prepare = try await client.post(
        "/v1/prepare", WirePrepare(schemas: [other]), token: nil, headers: headers)
      #expect(prepare.status == 403)
    }
  }

  @Test("the login form takes a bearer token of the server's and refuses others")
  func loginForm() async throws {
    try await Self.harness().run { client in
      var form: HTTPFields = [:]
      form[.contentType] = "application/x-www-form-urlencoded"
      let good = try await client.send(
        .post, "/ui/login", token: nil, body: "token=\(TestTokens.read)", headers: form)
      #expect(good.status == 303)
      let cookie = String(try #require(good.headers[.setCookie]).prefix { $0 != ";" })
      #expect(try await Self.session(client, cookie: cookie).scopes == ["read"])
      let bad = try await client.send(
        .post, "/ui/login", token: nil, body: "token=not-a-token-of-ours", headers: form)
      #expect(bad.headers[.location] == "/ui/login?failed=1")
      #expect(bad.headers[.setCookie] == nil)
    }
  }

  @Test("every page and file of the viewer carries a strict Content-Security-Policy; no inline script")
  func contentSecurityPolicy() async throws {
    try await Self.harness().run { client in
      for path in ["/ui", "/ui/viewer.js", "/ui/viewer.css", "/ui/login"] {
        let answer = try await client.send(.get, path, token: nil)
        #expect(answer.status == 200, "\(path)")
        let policy = try #require(answer.headers[Self.policyHeader])
        #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'"))
        #expect(!policy.contains("unsafe"))
        #expect(answer.headers[Self.nosniffHeader] == "nosniff")
        if path == "/ui" || path == "/ui/login" {
          let html = answer.text
          #expect(!html.contains("<script>") && !html.contains("javascript:"))
          #expect(html.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil, "no inline handler")
          for tag in html.components(separatedBy: "<script").dropFirst() {
            #expect(tag.hasPrefix(" src=\"/ui/"), "every script is a file of the viewer")
          }
        }
      }
      let script = try await client.send(.get, "/ui/viewer.js", token: nil).text
      #expect(!script.contains("innerHTML") && !script.contains("outerHTML") && !script.contains("eval("))
    }
  }

  @Test("a server without the viewer has no /ui")
  func noViewer() async throws {
    try await ServerHarness().run { client in
      let page = try await client.send(.get, "/ui", token: nil)
      let login = try await client.send(.get, "/ui/login?token=\(Self.oneTime)", token: nil)
      #expect(page.status == 404)
      #expect(login.status == 404)
    }
  }
}
