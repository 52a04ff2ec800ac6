@_spi(Backend) import Coffer
@_spi(Backend) import CofferPostgres
import Foundation
import Testing

/// URLs that name several servers, and what the backend makes of them; none needs a server.
@Suite("PostgreSQL URLs with several hosts")
struct PostgresHostsTests {
  private func configuration(_ text: String) throws -> PostgresBackend.Configuration {
    try PostgresBackend.Configuration(url: StoreURL(text), environment: [:])
  }

  @Test("every host of the URL is a server, with 5432 when it gives no port")
  func hosts() throws {
    let configuration = try configuration("postgres://app@db1:6432,db2,[::1]:7000/chat")
    #expect(
      configuration.hosts == [
        .init("db1", port: 6432), .init("db2", port: 5432), .init("::1", port: 7000),
      ])
    #expect(configuration.host == "db1")
    #expect(configuration.port == 6432)
    #expect(configuration.hosts.map(\.description) == ["db1:6432", "db2:5432", "[::1]:7000"])
  }

  @Test("host and port are the first server's, and setting them changes it")
  func firstServer() throws {
    var configuration = try configuration("postgres://app@db1:6432,db2/chat")
    configuration.host = "db0"
    configuration.port = 6000
    #expect(configuration.hosts == [.init("db0", port: 6000), .init("db2", port: 5432)])
    let single = PostgresBackend.Configuration(host: "db", port: 6543)
    #expect(single.hosts == [.init("db", port: 6543)])
  }

  @Test("a URL with several hosts keeps its options")
  func options() throws {
    let configuration = try configuration("postgres://app@db1,db2/chat?pool=3&connectTimeout=1.5")
    #expect(configuration.poolSize == 3)
    #expect(configuration.connectTimeout == .milliseconds(1500))
    #expect(configuration.database == "chat")
  }

  @Test("the store's name lists every server and never the password")
  func name() async throws {
    let url = try StoreURL("postgres://app:Sup3r-s3cret@127.0.0.1:1,127.0.0.1:2/chat?connectTimeout=2")
    let error = await #expect(throws: CofferError.self) {
      try await PostgresBackend(configuration: PostgresBackend.Configuration(url: url, environment: [:]))
    }
    #expect(error?.store == "postgres://app@127.0.0.1:1,127.0.0.1:2/chat")
    #expect(error?.description.contains("Sup3r-s3cret") == false)
  }

  // Refused at once by both, which the message says; a client that kept retrying would never
  // return and run into the time limit.
  @Test(
    "when no server answers, opening fails with unavailable, naming each server and the database",
    .timeLimit(.minutes(2)))
  func noServerAnswers() async throws {
    let url = try StoreURL("postgres://app@127.0.0.1:1,127.0.0.1:2/chat?connectTimeout=2")
    let error = await #expect(throws: CofferError.self) {
      try await PostgresBackend(configuration: PostgresBackend.Configuration(url: url, environment: [:]))
    }
    #expect(error?.code == .unavailable)
    let message = error?.message ?? ""
    #expect(message.contains("No server of database 'chat' accepts writes"), "\(message)")
    #expect(message.contains("127.0.0.1:1 (connection refused)"), "\(message)")
    #expect(message.contains("127.0.0.1:2 (connection refused)"), "\(message)")
  }

  @Test("a configuration without a server is refused")
  func noServer() async throws {
    var configuration = PostgresBackend.Configuration()
    configuration.hosts = []
    let error = await #expect(throws: CofferError.self) {
      try await PostgresBackend(configuration: configuration)
    }
    #expect(error?.code == .invalidConfiguration)
  }
}
