@_spi(Backend) import Coffer
import Foundation

extension BackendRegistry {
  /// Registers the `postgres:` and `postgresql:` schemes:
  /// `postgres://USER@HOST:PORT/DATABASE?schema=NAME&pool=N&tls=disable|prefer|require&connectTimeout=S&statementTimeout=S`
  /// (see ``PostgresBackend/Configuration``), with several servers as `HOST:PORT,HOST:PORT`. The
  /// password comes from the URL or `PGPASSWORD`.
  ///
  /// Scratch stores (for the conformance suite) are schemas of their own in the URL's
  /// database, named after the scratch store; removing one drops its schema.
  public mutating func registerPostgres() {
    for scheme in ["postgres", "postgresql"] {
      register(
        Entry(
          scheme: scheme,
          forms: [
            "\(scheme)://USER@HOST:5432[,HOST:PORT…]/DATABASE?schema=NAME&pool=N&tls=disable|prefer|require"
              + "&connectTimeout=SECONDS&statementTimeout=SECONDS&logStatements=on|off&reads=primary|standby|any"
              + "&maxStandbyLag=SECONDS"
          ],
          open: { url, logger in
            try await PostgresBackend(
              configuration: try PostgresBackend.Configuration(url: url), logger: logger)
          },
          scratchURL: { base, directory, name in
            var options = base.options
            options["schema"] = PostgresBackend.scratchSchema(for: directory + "/" + name)
            return StoreURL(
              scheme: base.scheme, path: base.path, hosts: base.hosts, user: base.user,
              password: base.password,
              options: options)
          },
          removeScratch: { url in
            await PostgresBackend.dropSchema(of: url)
          }))
    }
  }
}

extension PostgresBackend {
  /// A schema name for a scratch store: `coffer_scratch_` and a hash of its name, within 63 bytes.
  static func scratchSchema(for name: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in name.utf8 {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01b3
    }
    return "coffer_scratch_" + String(hash, radix: 36)
  }

  /// Drops the schema a URL names, with everything in it; does nothing when it cannot.
  static func dropSchema(of url: StoreURL) async {
    guard let configuration = try? Configuration(url: url), configuration.schema != "public",
      let backend = try? await PostgresBackend(configuration: configuration)
    else { return }
    _ = try? await backend.pool.withConnection(while: "removing a scratch store") { connection in
      try await backend.run("DROP SCHEMA IF EXISTS \(backend.catalog.namespace) CASCADE", on: connection)
    }
    try? await backend.close()
  }
}
