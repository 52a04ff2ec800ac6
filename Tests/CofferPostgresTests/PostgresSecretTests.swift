@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Logging
import Testing

/// Every fault of the PostgreSQL backend triggered once more, with the password in the store URL
/// itself and the store logging everything: no error text, no cause and no log line holds it.
@Suite struct PostgresSecretTests {
  /// A log handler that keeps every line and its metadata as text.
  struct CapturingLogHandler: LogHandler {
    let lines: LockedState<[String]>
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { metadata[key] }
      set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
      let all = metadata.merging(event.metadata ?? [:]) { $1 }
      let error = event.error.map { " \($0)" } ?? ""
      lines.withLock { $0.append("\(event.level) \(event.message) \(all)\(error)") }
    }
  }

  /// Opens a store that logs into `lines`.
  func open(_ url: StoreURL, _ lines: LockedState<[String]>) async throws -> Store {
    let logger = Logger(label: "coffer.secret-tests") { _ in CapturingLogHandler(lines: lines) }
    return try await openStore(url, logger: logger)
  }

  /// Runs `body` and returns the ``CofferError`` it throws, recording an issue when it throws
  /// none.
  func fault(_ what: String, _ body: () async throws -> Void) async -> (String, CofferError)? {
    do {
      try await body()
      Issue.record("\(what): expected an error, the call succeeded")
    } catch let error as CofferError {
      return (what, error)
    } catch {
      Issue.record("\(what): expected a CofferError, got \(type(of: error)): \(error)")
    }
    return nil
  }

  @Test func noErrorOrLogLineHoldsThePassword() async throws {
    let shared = try PostgresTestServer.required()
    // The password in the URL, as a careless deployment writes it.
    let server = PostgresTestServer(url: shared.with(password: shared.password), password: shared.password)
    let password = server.password
    try #require(!password.isEmpty, "the test server has no password to leak")
    let wrongPassword = "Wr0ng-\(UUID().uuidString)"
    let lines = LockedState<[String]>([])
    var faults: [(String, CofferError)?] = []

    faults.append(
      await fault("a bad option") { _ = try await open(server.with(options: ["pool": "0"]), lines) })
    faults.append(
      await fault("an unknown option") {
        _ = try await open(server.with(options: ["sslmode": "require"]), lines)
      })
    faults.append(
      await fault("a server that is not running") {
        _ = try await open(server.with(port: try freePort()), lines)
      })
    faults.append(
      await fault("a wrong password") { _ = try await open(server.with(password: wrongPassword), lines) })
    faults.append(
      await fault("a missing database") {
        _ = try await open(server.with(database: "coffer_missing_db"), lines)
      })
    faults.append(
      await fault("tls=require without TLS") {
        _ = try await open(server.with(options: ["tls": "require"]), lines)
      })

    try await server.scratch().use { scratch in
      let store = try await open(scratch.url, lines)
      try await store.insert(FaultItem(id: 1, batch: 1, title: "one"))
      try await store.insert(FaultCounter(id: 1, value: 0))
      faults.append(
        await fault("a duplicate id") { try await store.insert(FaultItem(id: 1, batch: 1, title: "again")) })

      // A statement timeout, waiting for a lock.
      let timed = try await open(
        server.with(options: ["schema": scratch.schema, "statementTimeout": "0.25"]), lines)
      try await timed.prepare([FaultCounter.self])
      let holder = try PSQLSession(server)
      try await holder.run(
        "BEGIN; SELECT value FROM \(scratch.table("FaultCounter")) WHERE id = 1 FOR UPDATE; SELECT 'locked';",
        until: "locked")
      faults.append(
        await fault("a statement timeout") { try await timed.update(FaultCounter(id: 1, value: 1)) })
      try await holder.finish("ROLLBACK;")
      try await timed.close()

      // A connection cut while a call uses it.
      let holder2 = try PSQLSession(server)
      try await holder2.run(
        "BEGIN; SELECT value FROM \(scratch.table("FaultCounter")) WHERE id = 1 FOR UPDATE; SELECT 'locked';",
        until: "locked")
      let cut = Task { try await store.update(FaultCounter(id: 1, value: 2)) }
      try await server.waitUntil(
        """
        SELECT count(*) FROM pg_stat_activity WHERE application_name = 'coffer' AND wait_event_type = 'Lock'
        AND position('\(scratch.schema)' IN query) > 0
        """)
      try await scratch.terminateConnections(where: "wait_event_type = 'Lock'")
      faults.append(await fault("a dropped connection") { try await cut.value })
      try await holder2.finish("ROLLBACK;")

      // A column changed behind Coffer's back.
      try await server.psql(
        "ALTER TABLE \(scratch.table("FaultItem")) ALTER COLUMN \"title\" TYPE bytea USING 'x'::bytea")
      let reopened = try await open(scratch.url, lines)
      faults.append(await fault("a changed column") { try await reopened.prepare([FaultItem.self]) })
      try await reopened.close()

      try await store.close()
      faults.append(await fault("a closed store") { _ = try await store.get(FaultItem.self, id: 1) })
      #expect(!store.backend.name.contains(password))
    }

    let found = faults.compactMap { $0 }
    #expect(found.count == 11)
    let codes = Set(found.map(\.1.code.name))
    #expect(
      codes == [
        "invalidURL", "unavailable", "accessDenied", "invalidConfiguration", "duplicateID", "timedOut",
        "schemaMismatch", "closed",
      ])
    for (what, error) in found {
      for text in error.everyText + [String(reflecting: error)] {
        #expect(!text.contains(password), "\(what): \(text)")
        #expect(!text.contains(wrongPassword), "\(what): \(text)")
      }
    }
    let logged = lines.withLock { $0 }
    #expect(!logged.isEmpty)
    for line in logged {
      #expect(!line.contains(password), "a log line holds the password: \(line)")
      #expect(!line.contains(wrongPassword), "a log line holds the wrong password: \(line)")
    }
  }
}
