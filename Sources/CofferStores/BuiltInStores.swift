import Coffer
import CofferMemory
import CofferPlist

#if SQLite
  import CofferSQLite
#endif
#if LMDB
  import CofferLMDB
#endif
#if Postgres
  import CofferPostgres
#endif
#if Remote
  import CofferRemote
#endif

extension BackendRegistry {
  /// A registry with every backend this build has: `memory:` and `plist:` always, `sqlite:`
  /// and `lmdb:` when their package traits (`SQLite`, `LMDB`, both on by default) are enabled,
  /// `postgres:` and `postgresql:` when the `Postgres` trait (off by default) is, `coffer+http:`
  /// and `coffer+https:` when the `Remote` trait (off by default) is.
  /// Its named in-memory stores are shared by everything in the process that uses `builtIn`;
  /// make your own registry for isolation.
  public static let builtIn: BackendRegistry = makeBuiltIn()

  /// A new registry with every built-in backend and its own in-memory namespace.
  public static func makeBuiltIn() -> BackendRegistry {
    var registry = BackendRegistry()
    registry.registerMemory()
    registry.registerPlist()
    #if SQLite
      registry.registerSQLite()
    #endif
    #if LMDB
      registry.registerLMDB()
    #endif
    #if Postgres
      registry.registerPostgres()
    #endif
    #if Remote
      registry.registerRemote()
    #endif
    return registry
  }
}

extension Store {
  /// Opens the store a URL names with the built-in backends.
  ///
  /// - Throws: ``CofferError/Code/invalidURL`` or ``CofferError/Code/unknownScheme`` listing the
  ///   supported schemes, or the backend's error on open.
  public static func open(url: String) async throws -> Store {
    try await open(url: url, registry: .builtIn)
  }

  /// Opens the store a URL names with the built-in backends and runs a migration plan on it
  /// before anything else touches it: ``Coffer/Store/open(url:registry:logger:migrating:)``
  /// with the ``Coffer/BackendRegistry/builtIn`` registry.
  ///
  /// ```swift
  /// let store = try await Store.open(url: "sqlite:///var/app/db.sqlite", migrating: plan)
  /// ```
  ///
  /// - Throws: what ``open(url:)`` throws; ``CofferError/Code/unknownMigration`` or
  ///   ``CofferError/Code/migrationFailed`` as ``Coffer/Store/migrate(_:)`` throws them (the
  ///   store is then closed again).
  public static func open(url: String, migrating plan: MigrationPlan) async throws -> Store {
    try await open(url: url, registry: .builtIn, migrating: plan)
  }
}
