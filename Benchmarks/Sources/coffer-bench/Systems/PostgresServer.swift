import Foundation

/// The PostgreSQL server the PostgreSQL systems are measured against, named by
/// `--postgres-url URL` or the environment variable `COFFER_BENCH_POSTGRES_URL`. Each system gets
/// a database of its own on it, dropped and created anew before every repetition, so no system
/// sees another's tables.
enum PostgresServer {
  /// The environment variable that names the server; `--postgres-url` sets it, so that the
  /// processes the memory probe starts reach the same server.
  static let variable = "COFFER_BENCH_POSTGRES_URL"

  /// The server's URL (`postgres://user:password@host:port/database`), or nil when none was named.
  static var url: String? {
    guard let text = ProcessInfo.processInfo.environment[variable], !text.isEmpty else { return nil }
    return text
  }

  /// Why the PostgreSQL systems are left out of this run, or nil when a server is named.
  static var absence: String? {
    url == nil
      ? "no PostgreSQL server named (pass --postgres-url URL or set \(variable); "
        + "scripts/test-postgres start DIR prints one)" : nil
  }

  /// The server's version and host, and the settings that decide what a commit costs, for the
  /// report (never the URL: it holds a password).
  static func describe() -> String {
    guard let url, let connection = try? PQConnection(url),
      let version = try? connection.scalar("SHOW server_version"),
      let fsync = try? connection.scalar("SHOW fsync"),
      let synchronous = try? connection.scalar("SHOW synchronous_commit")
    else { return "server not reachable" }
    let host = URLComponents(string: url)?.host ?? "?"
    return "server \(version) on \(host), fsync \(fsync), synchronous_commit \(synchronous)"
  }

  /// Names the server for this process and the processes it starts.
  static func use(_ url: String) throws {
    guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme)
    else {
      throw UsageError(message: "--postgres-url: expected postgres://user:password@host:port/database")
    }
    setenv(variable, url, 1)
  }
}

/// One system's database on the benchmark's server: its URL, and the administration the suite
/// needs around the timed work (create it empty, measure its size).
struct PostgresDatabase {
  /// The database's name, e.g. `coffer_bench_raw_libpq`.
  let name: String
  /// The server URL with this database in place of the one it names.
  let url: String
  /// The server URL as given: the database administrative commands connect to.
  private let serverURL: String

  /// The database `name` on the benchmark's server.
  init(_ name: String) throws {
    guard let serverURL = PostgresServer.url, var components = URLComponents(string: serverURL) else {
      throw BenchError(PostgresServer.absence ?? "the PostgreSQL URL does not parse")
    }
    components.path = "/" + name
    // A URL without a password takes PGPASSWORD's, as libpq and Coffer do, so that every
    // system (Fluent reads only the URL) logs in the same way.
    if components.password == nil, let password = ProcessInfo.processInfo.environment["PGPASSWORD"] {
      components.password = password
    }
    guard let url = components.string else { throw BenchError("cannot name database \(name) in the URL") }
    self.name = name
    self.url = url
    self.serverURL = serverURL
  }

  /// Drops the database (closing any session still on it) and creates it empty.
  func recreate() throws {
    let admin = try PQConnection(serverURL)
    try admin.execute("DROP DATABASE IF EXISTS \(PQConnection.quoted(name)) WITH (FORCE)")
    try admin.execute("CREATE DATABASE \(PQConnection.quoted(name))")
  }

  /// The bytes the database's own tables take, with their indexes and TOAST data (not the
  /// catalogs every database has, nor the server's write-ahead log); 0 when it cannot be read.
  func size() -> Int64 {
    guard let connection = try? PQConnection(url),
      let size = try? connection.scalar(
        """
        SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::text FROM pg_class c
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
        """)
    else { return 0 }
    return Int64(size) ?? 0
  }
}
