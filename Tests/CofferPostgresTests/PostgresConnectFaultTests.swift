@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// Opening a store when the server, the password, the database or TLS is not as the URL says:
/// a typed error at open, naming `host:port` and the database, never the password.
@Suite struct PostgresConnectFaultTests {
  // A connect timeout far longer than the test's time limit: the error naming the refusal shows
  // it was reported, not waited out; a client that waited would run into the limit.
  @Test(.timeLimit(.minutes(2))) func aServerThatIsNotRunningIsUnavailableAtOnce() async throws {
    let server = try PostgresTestServer.required()
    let port = try freePort()
    let url = server.with(options: ["connectTimeout": "300"], port: port)
    let error = await expectCofferError(.unavailable) {
      _ = try await openStore(url)
    }
    #expect(
      error?.names(address: "127.0.0.1:\(port)", database: server.database) == true,
      "\(String(describing: error))")
    #expect(error?.message.contains("connection refused") == true, "\(String(describing: error))")
    #expect(error?.reveals(server.password) == false)
  }

  @Test func aServerThatIsNotRunningOnIPv6IsUnavailableAndNamedInBrackets() async throws {
    let server = try PostgresTestServer.required()
    let port = try freePort(ipv6: true)
    let url = "postgres://\(server.url.user ?? "postgres")@[::1]:\(port)/\(server.database)?connectTimeout=5"
    let error = await expectCofferError(.unavailable) {
      _ = try await openStore(StoreURL(url))
    }
    #expect(
      error?.names(address: "[::1]:\(port)", database: server.database) == true,
      "\(String(describing: error))")
    #expect(error?.description.contains("[[") == false, "\(String(describing: error))")
    #expect(error?.message.contains("connection refused") == true, "\(String(describing: error))")
  }

  @Test func aWrongPasswordIsAccessDenied() async throws {
    let server = try PostgresTestServer.required()
    let wrong = "Wr0ng-\(UUID().uuidString)"
    let url = server.with(password: wrong)
    let error = await expectCofferError(.accessDenied) {
      _ = try await openStore(url)
    }
    #expect(
      error?.names(address: server.address, database: server.database) == true, "\(String(describing: error))"
    )
    #expect(error?.reveals(wrong) == false, "\(String(describing: error))")
    #expect(error?.reveals(server.password) == false)
  }

  @Test func aMissingDatabaseIsAnInvalidConfiguration() async throws {
    let server = try PostgresTestServer.required()
    let missing = "coffer_missing_\(UInt32.random(in: 0...UInt32.max))"
    let url = server.with(database: missing)
    let error = await expectCofferError(.invalidConfiguration) {
      _ = try await openStore(url)
    }
    #expect(error?.names(address: server.address, database: missing) == true, "\(String(describing: error))")
    #expect(error?.message.contains("createdb") == true)
    #expect(error?.reveals(server.password) == false)
  }

  @Test func requiringTLSOfAServerWithoutItIsUnavailable() async throws {
    let server = try PostgresTestServer.required()
    guard try await server.psql("SHOW ssl") == "off" else {
      try Test.cancel("Skipped: the test server offers TLS, so tls=require connects")
    }
    let url = server.with(options: ["tls": "require"])
    let error = await expectCofferError(.unavailable) {
      _ = try await openStore(url)
    }
    #expect(
      error?.names(address: server.address, database: server.database) == true, "\(String(describing: error))"
    )
    #expect(error?.message.contains("TLS") == true)
    #expect(error?.reveals(server.password) == false)
  }

  @Test func preferringTLSOfAServerWithoutItConnectsInPlainText() async throws {
    try await PostgresTestServer.required().scratch(options: ["tls": "prefer"]).use { scratch in
      let store = try await scratch.open()
      try await store.insert(FaultItem(id: 1, batch: 1, title: "plain"))
      #expect(try await store.get(FaultItem.self, id: 1)?.title == "plain")
      try await store.close()
    }
  }
}

extension PostgresConnectFaultTests {
  @Test(.timeLimit(.minutes(2))) func aServerThatNeverAnswersIsUnavailableAfterTheConnectTimeout()
    async throws
  {
    let server = try PostgresTestServer.required()
    let listener = try SilentListener()
    let url = server.with(options: ["connectTimeout": "1"], port: listener.port)
    let started = ContinuousClock.now
    let error = await expectCofferError(.unavailable) {
      _ = try await openStore(url)
    }
    let elapsed = ContinuousClock.now - started
    // Not before the timeout (the error says it timed out); the time limit guards against a hang.
    #expect(elapsed >= .milliseconds(900), "took \(elapsed) with connectTimeout=1")
    #expect(
      error?.names(address: "127.0.0.1:\(listener.port)", database: server.database) == true,
      "\(String(describing: error))")
    #expect(error?.message.contains("timed out") == true, "\(String(describing: error))")
    withExtendedLifetime(listener) {}
  }
}
