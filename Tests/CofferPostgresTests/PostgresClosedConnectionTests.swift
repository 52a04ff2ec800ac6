@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

@testable import CofferPostgres

/// postgres-nio 1.33 never completes a statement written to a connection that has closed; every
/// statement Coffer sends goes through `PostgresConnection.send`, which must fail at once then.
@Suite struct PostgresClosedConnectionTests {
  @Test func aStatementOnAClosedConnectionFailsAtOnceAsALostConnection() async throws {
    let server = try PostgresTestServer.required()
    let connection = try await PostgresConnection.connect(
      configuration: PostgresConnection.Configuration(
        host: server.url.host ?? "127.0.0.1", port: server.url.port ?? 5432,
        username: server.url.user ?? "postgres",
        password: server.password, database: server.database, tls: .disable),
      id: 1, logger: Logger(label: "coffer.test"))
    let before = try await connection.send("SELECT 1").collect()
    #expect(before.count == 1)
    try await connection.close()

    // The statement races a 10 s timer in tasks of their own, so that a statement that never
    // answers fails the test instead of holding it.
    let outcome = await withCheckedContinuation {
      (continuation: CheckedContinuation<Result<Int, any Error>?, Never>) in
      let decided = LockedState(false)
      @Sendable func decide(_ outcome: Result<Int, any Error>?) {
        let first = decided.withLock { decided in
          defer { decided = true }
          return !decided
        }
        if first { continuation.resume(returning: outcome) }
      }
      Task {
        do {
          decide(.success(try await connection.send("SELECT 1").collect().count))
        } catch {
          decide(.failure(error))
        }
      }
      Task {
        try? await Task.sleep(for: .seconds(10))
        decide(nil)
      }
    }
    guard
      case .failure(let error) = try #require(outcome, "the statement on a closed connection never answered")
    else {
      Issue.record("a statement on a closed connection succeeded")
      return
    }
    #expect(PostgresFailure.isConnectionLoss(error), "\(error)")
  }
}
