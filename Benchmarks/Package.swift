// swift-tools-version: 6.2
import PackageDescription

/// The benchmark suite lives in its own package so that library users never resolve or build
/// what it compares against (GRDB, the raw C libraries). Run it with
/// `swift run -c release --package-path Benchmarks coffer-bench`.
let package = Package(
  name: "CofferBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    // The default backends plus postgres:, which the Postgres trait builds into CofferStores.
    // Server and Remote for the remote backend's workload (--remote).
    .package(name: "Coffer", path: "..", traits: [.defaults, "Postgres", "Server", "Remote"]),
    .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    // Fluent over PostgreSQL, as a Swift server developer uses it: what the postgres backend is
    // compared with beside raw libpq.
    .package(url: "https://github.com/vapor/fluent-kit", exact: "1.57.0"),
    .package(url: "https://github.com/vapor/fluent-postgres-driver", exact: "2.14.0"),
    // Fluent over SQLite: what the sqlite backend is compared with in the ticket workload.
    .package(url: "https://github.com/vapor/fluent-sqlite-driver", exact: "4.9.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    // postgres-nio alone, for the spike that compares ways of reaching PostgreSQL from async code.
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    // The bare routes and their client, the physical limit the remote backend is held to.
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    // A real metrics backend and an in-memory tracer, for what telemetry costs a point get.
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
  ],
  targets: [
    // The C libraries, reached directly: the physical limit every Coffer backend is held to.
    .systemLibrary(name: "RawSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
    .systemLibrary(name: "RawLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
    .systemLibrary(name: "RawPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
    .executableTarget(
      name: "coffer-bench",
      dependencies: [
        "RawSQLite", "RawLMDB", "RawPostgres",
        .product(name: "Coffer", package: "Coffer"),
        .product(name: "CofferPlist", package: "Coffer"),
        .product(name: "CofferStores", package: "Coffer"),
        .product(name: "CofferServer", package: "Coffer"),
        .product(name: "CofferSync", package: "Coffer"),
        .product(name: "CofferTools", package: "Coffer"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "FluentKit", package: "fluent-kit"),
        .product(name: "FluentSQL", package: "fluent-kit"),
        .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
        .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "CofferMacros", package: "Coffer"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
        .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
      ],
      swiftSettings: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
      ]),
  ]
)
