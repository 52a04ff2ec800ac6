@_spi(Backend) import Coffer
import CofferStores

/// Every system the suite measures, in table order, keyed by a short name the command line and
/// the memory probe use. Coffer backends this build does not register are left out, and so are
/// the PostgreSQL systems when no server is named.
enum SystemCatalog {
  static let all: [(key: String, make: @Sendable () -> any BenchSystem)] = [
    (
      "coffer-sqlite",
      { CofferSystem(name: "Coffer sqlite", scheme: "sqlite", file: "coffer.sqlite", durable: true) }
    ),
    ("raw-sqlite", { RawSQLiteSystem() }),
    ("grdb", { GRDBSystem() }),
    (
      "coffer-lmdb", { CofferSystem(name: "Coffer lmdb", scheme: "lmdb", file: "coffer-lmdb", durable: true) }
    ),
    ("raw-lmdb", { RawLMDBSystem() }),
    ("coffer-memory", { CofferSystem(name: "Coffer memory", scheme: "memory", file: "", durable: false) }),
    (
      "coffer-plist",
      {
        CofferSystem(
          name: "Coffer plist", scheme: "plist", file: "coffer.plist", options: "?format=binary",
          durable: true)
      }
    ),
    ("dictionary", { DictionarySystem() }),
    (
      "coffer-postgres",
      { CofferSystem(name: "Coffer postgres", database: "coffer_bench_coffer_postgres") }
    ),
    ("raw-libpq", { RawPostgresSystem() }),
    ("fluent-postgres", { FluentSystem() }),
    (
      "coffer-sqlite-codable",
      {
        CofferSystem(
          name: "Coffer sqlite", scheme: "sqlite", file: "coffer.sqlite", durable: true, codec: .codable)
      }
    ),
    (
      "coffer-lmdb-codable",
      {
        CofferSystem(name: "Coffer lmdb", scheme: "lmdb", file: "coffer-lmdb", durable: true, codec: .codable)
      }
    ),
    (
      "coffer-memory-codable",
      { CofferSystem(name: "Coffer memory", scheme: "memory", file: "", durable: false, codec: .codable) }
    ),
    (
      "coffer-plist-codable",
      {
        CofferSystem(
          name: "Coffer plist", scheme: "plist", file: "coffer.plist", options: "?format=binary",
          durable: true,
          codec: .codable)
      }
    ),
    (
      "coffer-postgres-codable",
      {
        CofferSystem(
          name: "Coffer postgres", database: "coffer_bench_coffer_postgres_codable", codec: .codable)
      }
    ),
  ]

  /// The systems that need the PostgreSQL server.
  static let postgresKeys: Set = [
    "coffer-postgres", "raw-libpq", "fluent-postgres", "coffer-postgres-codable",
  ]

  /// The keys of the systems available in this build and run.
  static var available: [String] { all.map(\.key).filter { absence($0) == nil } }

  /// Why a system is left out of this build or run, or nil when it is available.
  static func absence(_ key: String) -> String? {
    if postgresKeys.contains(key), let reason = PostgresServer.absence { return reason }
    guard key.hasPrefix("coffer-") else { return nil }
    let backend = key.dropFirst("coffer-".count).split(separator: "-").first.map(String.init) ?? ""
    guard !BackendRegistry.makeBuiltIn().schemes.contains(backend) else { return nil }
    return "this build does not register the \(backend): backend"
      + (backend == "postgres" ? " (the root package's Postgres trait)" : "")
  }

  static func make(_ key: String) -> (any BenchSystem)? { all.first { $0.key == key }?.make() }
}
