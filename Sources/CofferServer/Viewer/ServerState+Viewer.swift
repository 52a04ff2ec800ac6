import Coffer
import CofferWire
import Foundation
import Hummingbird
import NIOCore
import Synchronization

extension ServerState {
  /// The headers every page and file of the viewer carries: a Content-Security-Policy that
  /// allows only the viewer's own script, style and connections (no inline script, no other
  /// origin), and no framing, sniffing or referrer.
  static let viewerHeaders: HTTPFields = {
    var headers: HTTPFields = [.cacheControl: "no-store"]
    let fields = [
      (
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
          + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
      ),
      ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"), ("X-Frame-Options", "DENY"),
    ]
    for (name, value) in fields {
      if let name = HeaderName(name) { headers[name] = value }
    }
    return headers
  }()

  /// A file of the viewer.
  func viewerFile(_ bytes: [UInt8], type: String, status: HTTPResponse.Status = .ok) -> Response {
    var headers = Self.viewerHeaders
    headers[.contentType] = type
    return Response(
      status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
  }

  /// A redirect to a path of this server, optionally storing or clearing the session cookie.
  func viewerRedirect(_ location: String, cookie: String? = nil) -> Response {
    var headers = Self.viewerHeaders
    headers[.location] = location
    if let cookie { headers[.setCookie] = cookie }
    return Response(status: .seeOther, headers: headers)
  }

  /// Adds the viewer's routes under `/ui`: the page, its script and style, the login form and
  /// the session's details. The page reads and writes through the API's own routes.
  func addViewerRoutes(_ viewer: CofferServer.Viewer, to router: Router<BasicRequestContext>) {
    let html = "text/html; charset=utf-8"
    router.get("ui") { _, _ in self.viewerFile(PackageResources.index_html, type: html) }
    router.get("ui/viewer.js") { _, _ in
      self.viewerFile(PackageResources.viewer_js, type: "text/javascript; charset=utf-8")
    }
    router.get("ui/viewer.css") { _, _ in
      self.viewerFile(PackageResources.viewer_css, type: "text/css; charset=utf-8")
    }
    // `coffer ui` prints /ui/login?token=ONE-TIME: the token becomes a cookie, and the browser
    // is sent on to /ui, so the token leaves the address bar (and history) at once.
    router.get("ui/login") { request, _ in
      if let token = request.uri.queryParameters["token"] {
        guard let grant = viewer.redeem(oneTime: token) else {
          return self.viewerRedirect("/ui/login?failed=1")
        }
        return self.viewerRedirect(
          "/ui", cookie: CofferServer.Viewer.cookie(viewer.open(grant), for: request))
      }
      let failed = request.uri.queryParameters["failed"] != nil
      return self.viewerFile(
        failed ? PackageResources.login_failed_html : PackageResources.login_html, type: html,
        status: failed ? .unauthorized : .ok)
    }
    // The login form posts a bearer token of the server's (or the one-time token).
    router.post("ui/login") { request, _ in
      if CofferServer.Viewer.isCrossSite(request) {
        return self.viewerRedirect("/ui/login?failed=1")
      }
      guard let body = try? await self.body(of: request),
        let token = Self.formField("token", in: String(buffer: body)), !token.isEmpty
      else { return self.viewerRedirect("/ui/login?failed=1") }
      let grant =
        viewer.redeem(oneTime: Substring(token))
        ?? self.configuration.tokens.flatMap { TokenCheck.grant(for: Substring(token), among: $0) }
      guard let grant else { return self.viewerRedirect("/ui/login?failed=1") }
      return self.viewerRedirect("/ui", cookie: CofferServer.Viewer.cookie(viewer.open(grant), for: request))
    }
    router.post("ui/logout") { request, context in
      await self.respond(request, context, scope: .read) { call in
        if let id = CofferServer.Viewer.sessionID(in: call.request) { viewer.close(id) }
        var response = try self.json(WireEmpty())
        response.headers[.setCookie] = CofferServer.Viewer.clearedCookie(for: call.request)
        return response
      }
    }
    // What the page needs to know about its session: the CSRF token for its writes, and
    // whether it may write at all. Without a session on a server without tokens (`--no-auth`,
    // loopback only), the page gets a session with every scope.
    router.get("ui/session") { request, context in
      var created: String?
      if CofferServer.Viewer.sessionID(in: request) == nil, self.configuration.tokens == nil,
        request.headers[.authorization] == nil
      {
        created = viewer.open(.everything)
      }
      return await self.respond(request, context, scope: .read) { call in
        let session =
          created.flatMap { id in viewer.sessions.withLock { $0[id] } }
          ?? viewer.session(for: call.request)?.session
        let answer = ViewerSession(
          csrf: session?.csrf ?? "", scopes: call.grant.scopes.map(\.rawValue).sorted(),
          entities: call.grant.entities.map { $0.sorted() }, store: call.storeName)
        var response = try self.json(answer)
        if let created {
          response.headers[.setCookie] = CofferServer.Viewer.cookie(created, for: call.request)
        }
        response.headers[.cacheControl] = "no-store"
        return response
      }
    }
    // The migrations the store ran, for the schema page (not part of the backend interface).
    router.get("ui/migrations") { request, context in
      await self.respond(request, context, scope: .read) { call in
        let records = try await call.store.migrations()
        return try self.json(
          records.map {
            ViewerMigration(
              name: $0.name, position: $0.position,
              appliedAt: Int64(($0.appliedAt.timeIntervalSince1970 * 1000).rounded()),
              rowsTouched: $0.rowsTouched)
          })
      }
    }
  }

  /// A field of an `application/x-www-form-urlencoded` body.
  static func formField(_ name: String, in body: String) -> String? {
    for pair in body.split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard parts.count == 2, parts[0] == name else { continue }
      return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
    return nil
  }
}

/// `GET /ui/session`.
struct ViewerSession: Codable, Sendable {
  var csrf: String
  var scopes: [String]
  var entities: [String]?
  var store: String
}

/// One migration the store ran, for `GET /ui/migrations`.
struct ViewerMigration: Codable, Sendable {
  var name: String
  var position: Int
  /// Milliseconds since 1970.
  var appliedAt: Int64
  var rowsTouched: Int
}

/// `{}`.
struct WireEmpty: Codable, Sendable {}
