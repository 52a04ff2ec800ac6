import Foundation

/// The database servers the tests run against, found through the environment.
///
/// `make test` starts a throwaway PostgreSQL cluster on loopback and sets
/// `COFFER_TEST_POSTGRES_URL` (and `PGPASSWORD`) before running the tests, so CI always runs the
/// PostgreSQL tests. Without the variable they are reported as skipped, with ``postgresMissing``
/// as the reason: never silently passed.
public enum TestServers {
  /// The environment variable that names the PostgreSQL server for the tests.
  public static let postgresVariable = "COFFER_TEST_POSTGRES_URL"

  /// The `postgres://` URL of the test server, or `nil` when none was given.
  public static let postgresURL: String? = {
    guard let url = ProcessInfo.processInfo.environment[postgresVariable], !url.isEmpty else { return nil }
    return url
  }()

  /// Why the PostgreSQL tests cannot run here.
  public static let postgresMissing =
    "\(postgresVariable) is not set, so there is no PostgreSQL server to test against. `make test` starts a "
    + "throwaway one (scripts/test-postgres) and sets it; or point it at a server of your own: "
    + "\(postgresVariable)=postgres://USER@HOST:PORT/DATABASE with PGPASSWORD set."

  /// The store URLs of the servers that are available: the PostgreSQL one when it is set.
  public static var storeURLs: [String] { postgresURL.map { [$0] } ?? [] }
}
