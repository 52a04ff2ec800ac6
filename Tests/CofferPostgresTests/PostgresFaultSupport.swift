@_spi(Backend) import Coffer
import CofferChildProcess
import CofferStores
import CofferTestSupport
import Foundation
import Logging
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Opens the store a URL names, with its password: the text of a `StoreURL` never holds the
/// password, so a URL that carries one cannot go through `Store.open(url:)` as text.
func openStore(_ url: StoreURL, logger: Logger? = nil) async throws -> Store {
  Store(backend: try await BackendRegistry.builtIn.open(url, logger: logger), logger: logger)
}

/// A row the fault tests write: `batch` says which batch wrote it, so a test can tell a whole
/// batch from part of one.
struct FaultItem: Storable, Equatable {
  var id: Int64
  var batch: Int64
  var title: String
}

/// A row the fault tests lock from another connection, so that a batch updating it waits.
struct FaultCounter: Storable, Equatable {
  var id: Int64
  var value: Int64
}

/// The test server: its URL, its password and the registry that opens it.
struct PostgresTestServer {
  /// The server's URL, as `COFFER_TEST_POSTGRES_URL` gives it.
  let url: StoreURL
  /// The password: the URL's, or `PGPASSWORD`.
  let password: String

  /// The test server, or `nil` when this run has none.
  static func find() throws -> PostgresTestServer? {
    guard let text = TestServers.postgresURL else { return nil }
    let url = try StoreURL(text)
    let password = url.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"] ?? ""
    return PostgresTestServer(url: url, password: password)
  }

  /// The test server, or skips the test (with the reason) when this run has none.
  static func required() throws -> PostgresTestServer {
    guard let server = try find() else {
      try Test.cancel("Skipped: \(TestServers.postgresMissing)")
    }
    return server
  }

  /// `host:port`, as errors name it.
  var address: String { "\(url.host ?? "?"):\(url.port ?? 5432)" }
  /// The database's name.
  var database: String { String(url.path.drop { $0 == "/" }) }

  /// The URL with other options, user, password or database.
  func with(
    options: [String: String] = [:], user: String? = nil, password: String? = nil, database: String? = nil,
    port: Int? = nil
  ) -> StoreURL {
    StoreURL(
      scheme: url.scheme, path: database.map { "/" + $0 } ?? url.path, host: url.host, port: port ?? url.port,
      user: user ?? url.user, password: password ?? url.password, options: url.options.merging(options) { $1 }
    )
  }

  /// A new schema of its own for one test (`coffer_test_…`), so that tests run in parallel.
  func scratch(options: [String: String] = [:]) -> PostgresScratch {
    let schema = "coffer_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    var options = options
    options["schema"] = schema
    return PostgresScratch(server: self, schema: schema, url: with(options: options))
  }

  /// Runs SQL with `psql` and returns what it printed (unaligned, tuples only), or skips the
  /// test when `psql` is not installed.
  @discardableResult
  func psql(_ sql: String) async throws -> String {
    let run: ChildProcess.Captured
    do {
      run = try await ChildProcess.run("psql", psqlArguments + ["-c", sql], environment: psqlEnvironment)
    } catch let failure as ChildProcess.LaunchFailure {
      try Test.cancel("Skipped: psql is not installed (\(failure)); `make test` installs it.")
    }
    guard run.termination == .exited(0) else {
      throw PSQLFailure(sql: sql, output: run.output + run.errors)
    }
    return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// `psql`'s arguments: the server, no start-up file, unaligned tuples, stop at the first error.
  var psqlArguments: [String] {
    [
      "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h", url.host ?? "127.0.0.1", "-p",
      "\(url.port ?? 5432)", "-U", url.user ?? "postgres", "-d", database,
    ]
  }

  /// This process's environment with the server's password for `psql`.
  var psqlEnvironment: [String: String] {
    ProcessInfo.processInfo.environment.merging(["PGPASSWORD": password]) { $1 }
  }

  /// Polls `psql` with a query until it prints `expected` (or, without one, something other
  /// than `0` or nothing); fails the test after `seconds`.
  func waitUntil(_ sql: String, prints expected: String? = nil, seconds: Double = 20) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    var output = ""
    while ContinuousClock.now < deadline {
      output = try await psql(sql)
      if let expected { if output == expected { return } } else if !output.isEmpty, output != "0" { return }
      try await Task.sleep(for: .milliseconds(20))
    }
    Issue.record("Waited \(seconds) s in vain for: \(sql) (it prints \(output))")
    throw PSQLFailure(sql: sql, output: "timed out")
  }
}

/// A `psql` command that failed.
struct PSQLFailure: Error, CustomStringConvertible {
  var sql: String
  var output: String
  var description: String { "psql failed on \(sql): \(output)" }
}

/// A schema of one test's own on the test server.
struct PostgresScratch {
  let server: PostgresTestServer
  /// The schema's name, unquoted.
  let schema: String
  /// The store's URL: the server's with `?schema=`.
  let url: StoreURL

  /// A table of the store, quoted for SQL.
  func table(_ name: String) -> String { "\"\(schema)\".\"\(name)\"" }

  /// Opens the store.
  func open(options: [String: String] = [:]) async throws -> Store {
    let url = StoreURL(
      scheme: url.scheme, path: url.path, host: url.host, port: url.port, user: url.user,
      password: url.password, options: url.options.merging(options) { $1 })
    return try await openStore(url)
  }

  /// Starts counting, in a table of this schema, the statements that update rows of `entity`
  /// (an `INSERT … ON CONFLICT DO UPDATE` counts too); ``updateStatements()`` reads the count.
  func countUpdateStatements(on entity: String) async throws {
    let quoted = "\"\(schema)\""
    try await server.psql(
      """
      CREATE TABLE \(quoted)."statements" (n bigint NOT NULL);
      INSERT INTO \(quoted)."statements" VALUES (0);
      CREATE FUNCTION \(quoted)."count_statement"() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN UPDATE \(quoted)."statements" SET n = n + 1; RETURN NULL; END $$;
      CREATE TRIGGER "counted" AFTER UPDATE ON \(table(entity))
        FOR EACH STATEMENT EXECUTE FUNCTION \(quoted)."count_statement"();
      """)
  }

  /// How many statements updated rows since ``countUpdateStatements(on:)``, as psql prints it.
  func updateStatements() async throws -> String {
    try await server.psql("SELECT n FROM \"\(schema)\".\"statements\"")
  }

  /// Drops the schema with everything in it.
  func remove() async {
    await BackendRegistry.builtIn.entry(for: "postgres")?.removeScratch?(url)
  }

  /// Runs `body` with this scratch store's schema, dropping the schema afterwards, also when
  /// `body` throws.
  func use<R>(_ body: (PostgresScratch) async throws -> R) async throws -> R {
    do {
      let result = try await body(self)
      await remove()
      return result
    } catch {
      await remove()
      throw error
    }
  }

  /// Ends the store's connections to the server (as `pg_terminate_backend` does when an
  /// administrator or a proxy cuts them), picking them by their last query, which names the
  /// schema; returns how many it ended, once they are gone.
  @discardableResult
  func terminateConnections(where condition: String = "true") async throws -> Int {
    let ended = try await server.psql(
      """
      SELECT count(*) FROM (SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity
      WHERE application_name = 'coffer' AND pid <> pg_backend_pid() AND position('\(schema)' IN query) > 0
      AND \(condition)) AS ended
      """)
    return Int(ended) ?? 0
  }
}

/// A `psql` session that stays open between statements: it holds a transaction (and its
/// locks) while a test makes a store wait.
final class PSQLSession {
  private let child: ChildProcess

  /// Starts `psql` on the test server, reading statements from a pipe.
  init(_ server: PostgresTestServer) throws {
    child = try ChildProcess(
      "psql", server.psqlArguments, environment: server.psqlEnvironment, standardInput: .pipe,
      standardOutput: .pipe, standardError: .standardOutput)
  }

  /// Sends SQL and waits until `psql` prints `marker` (select it as the last statement).
  func run(_ sql: String, until marker: String) async throws {
    try child.standardInput.write(Array((sql + "\n").utf8))
    let printed = try await child.standardOutput.read(until: marker)
    if !String(decoding: printed, as: UTF8.self).contains(marker) {
      throw PSQLFailure(sql: sql, output: String(decoding: printed, as: UTF8.self))
    }
  }

  /// Sends the last SQL, ends the session and returns what `psql` printed meanwhile.
  @discardableResult
  func finish(_ sql: String = "") async throws -> String {
    if !sql.isEmpty { try child.standardInput.write(Array((sql + "\n").utf8)) }
    child.standardInput.close()
    let rest = try await child.standardOutput.readToEnd()
    _ = await child.waitUntilExit()
    return String(decoding: rest, as: UTF8.self)
  }

  deinit {
    child.kill()
    _ = child.waitUntilExit()
  }
}

/// A TCP port on 127.0.0.1 (or ::1) that nothing listens on: bound, then released.
func freePort(ipv6: Bool = false) throws -> Int {
  let socket = Glibc.socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard socket >= 0 else { throw PSQLFailure(sql: "socket()", output: String(cString: strerror(errno))) }
  defer { close(socket) }
  var port: in_port_t = 0
  if ipv6 {
    var address = sockaddr_in6()
    address.sin6_family = sa_family_t(AF_INET6)
    address.sin6_addr = in6addr_loopback
    var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
        bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
      }
    }
    guard bound else { throw PSQLFailure(sql: "bind(::1)", output: String(cString: strerror(errno))) }
    port = address.sin6_port
  } else {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
        bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
      }
    }
    guard bound else { throw PSQLFailure(sql: "bind(127.0.0.1)", output: String(cString: strerror(errno))) }
    port = address.sin_port
  }
  return Int(in_port_t(bigEndian: port))
}

/// Runs `body`, expecting a ``CofferError``, and returns it; records an issue (and returns
/// `nil`) when `body` succeeds or throws something else.
func expectCofferError(
  _ code: CofferError.Code, sourceLocation: SourceLocation = #_sourceLocation,
  _ body: () async throws -> Void
) async -> CofferError? {
  do {
    try await body()
    Issue.record("Expected a \(code) error, but the call succeeded", sourceLocation: sourceLocation)
    return nil
  } catch let error as CofferError {
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    return error
  } catch {
    Issue.record(
      "Expected a CofferError \(code), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
    return nil
  }
}

extension CofferError {
  /// Every text a person or a log may see: the description (message and context) and the cause.
  var everyText: [String] {
    [description, message, store ?? "", underlying.map { String(describing: $0) } ?? ""]
  }

  /// Whether the error says where: the server's `host:port` and the database, in its message
  /// or its context (the store's name, `postgres://USER@HOST:PORT/DATABASE`).
  func names(address: String, database: String) -> Bool {
    description.contains(address)
      && (description.contains("/\(database)") || description.contains("'\(database)'"))
  }

  /// Whether any text of the error contains `secret`.
  func reveals(_ secret: String) -> Bool {
    !secret.isEmpty && everyText.contains { $0.contains(secret) }
  }
}

/// A TCP socket on 127.0.0.1 that takes connections (the kernel completes them) and never says
/// a word: a server that hangs, or a firewall that swallows everything after the handshake.
final class SilentListener {
  /// The port it listens on.
  let port: Int
  private let socket: Int32

  init() throws {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw PSQLFailure(sql: "socket()", output: String(cString: strerror(errno))) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let listening = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
        bind(socket, address, length) == 0 && listen(socket, 16) == 0
          && getsockname(socket, address, &length) == 0
      }
    }
    guard listening else {
      close(socket)
      throw PSQLFailure(sql: "listen(127.0.0.1)", output: String(cString: strerror(errno)))
    }
    self.socket = socket
    port = Int(in_port_t(bigEndian: address.sin_port))
  }

  deinit { close(socket) }
}
