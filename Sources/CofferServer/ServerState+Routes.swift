import Coffer
import CofferSync
import CofferWire
import Hummingbird
import NIOCore

extension ServerState {
  /// The answer to a method a route does not take.
  func notAllowed(_ allowed: HTTPRequest.Method) -> Response {
    var response = failure(
      CofferError(.invalidInput, "This route takes \(allowed.rawValue) only."))
    response.status = .methodNotAllowed
    response.headers[.allow] = allowed.rawValue
    return response
  }

  /// Adds every route under `/v1` (one store) or `/{store}/v1` (named stores), and the OpenAPI
  /// document at the root.
  func addRoutes(to router: Router<BasicRequestContext>) {
    router.get("openapi.json") { _, _ in
      Response(
        status: .ok, headers: [.contentType: "application/json"],
        body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.json)))
    }
    let group = router.group(isNamed ? "{store}/v1" : "v1")
    group.get("health") { _, _ in try self.json(WireHealth()) }
    group.get("store") { request, context in
      await self.respond(request, context, scope: .read) { try self.storeInfo($0) }
    }
    let posts: [(String, CofferServer.Scope, @Sendable (Call) async throws -> Response)] = [
      (WirePath.prepare, .read, { try await self.prepare($0) }),
      (WirePath.read, .read, { try await self.read($0) }),
      (WirePath.count, .read, { try await self.count($0) }),
      (WirePath.get, .read, { try await self.get($0) }),
      (WirePath.aggregate, .read, { try await self.aggregate($0) }),
      (WirePath.apply, .write, { try await self.apply($0) }),
      (WirePath.adminRecord, .admin, { try await self.recordChanges($0) }),
      (WirePath.adminTrim, .admin, { try await self.trimChanges($0) }),
      (SyncWirePath.adopt, .write, { try await self.syncAdopt($0) }),
      (SyncWirePath.message, .read, { try await self.syncMessage($0) }),
      (SyncWirePath.receive, .write, { try await self.syncReceive($0) }),
    ]
    for (path, scope, handler) in posts {
      group.post(RouterPath(path)) { request, context in
        await self.respond(request, context, scope: scope, readsBody: true, handler)
      }
    }
    let gets: [(String, @Sendable (Call) async throws -> Response)] = [
      (WirePath.commitMarker, { try await self.commitMarker($0) }),
      (WirePath.changesBounds, { try await self.changeBounds($0) }),
      (WirePath.changes, { try await self.changes($0) }),
      (WirePath.changesWait, { try await self.waitForChanges($0) }),
      (WirePath.changesStream, { try await self.changeStream($0) }),
      (SyncWirePath.replica, { try await self.syncReplicaInfo($0) }),
      (SyncWirePath.position, { try await self.syncPosition($0) }),
    ]
    // Any other method on a route of the API: 405, with the methods it takes.
    let methods: [HTTPRequest.Method] =
      [.get, .post, .put, .delete, .patch, .head, .options, .trace]
      + [HTTPRequest.Method("QUERY")].compactMap { $0 }
    let routes =
      [(WirePath.health, HTTPRequest.Method.get), (WirePath.store, .get)]
      + posts.map { ($0.0, HTTPRequest.Method.post) } + gets.map { ($0.0, HTTPRequest.Method.get) }
    for (path, allowed) in routes {
      for method in methods where method != allowed {
        group.on(RouterPath(path), method: method) { _, _ in self.notAllowed(allowed) }
      }
    }
    for (path, handler) in gets {
      group.get(RouterPath(path)) { request, context in
        await self.respond(request, context, scope: .read, handler)
      }
    }
  }
}
