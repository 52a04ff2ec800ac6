// swift-tools-version: 6.2
import CompilerPluginSupport
import PackageDescription

/// Settings every target shares: Swift 6 language mode is the tools-version default;
/// these upcoming features are turned on once, here, for all targets.
let upcoming: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("MemberImportVisibility"),
  .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
  .enableUpcomingFeature("InferIsolatedConformances"),
]

let package = Package(
  name: "Coffer",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "Coffer", targets: ["Coffer"]),
    .library(name: "CofferMemory", targets: ["CofferMemory"]),
    .library(name: "CofferPlist", targets: ["CofferPlist"]),
    .library(name: "CofferSQLite", targets: ["CofferSQLite"]),
    .library(name: "CofferLMDB", targets: ["CofferLMDB"]),
    .library(name: "CofferPostgres", targets: ["CofferPostgres"]),
    .library(name: "CofferRemote", targets: ["CofferRemote"]),
    // CofferServer, for an app that embeds the server (`coffer serve` needs only the trait).
    .library(name: "CofferServer", targets: ["CofferServer"]),
    .library(name: "CofferMacros", targets: ["CofferMacros"]),
    .library(name: "CofferStores", targets: ["CofferStores"]),
    .library(name: "CofferConfiguration", targets: ["CofferConfiguration"]),
    .library(name: "CofferConformance", targets: ["CofferConformance"]),
    .library(name: "CofferSync", targets: ["CofferSync"]),
    // Copy, export and import, verify and inspect, for tools and operators.
    .library(name: "CofferTools", targets: ["CofferTools"]),
    .executable(name: "coffer", targets: ["coffer"]),
  ],
  traits: [
    .trait(
      name: "SQLite",
      description: "The sqlite: backend in CofferStores' built-in registry (needs libsqlite3-dev)."),
    .trait(
      name: "LMDB", description: "The lmdb: backend in CofferStores' built-in registry (needs liblmdb-dev)."),
    .trait(
      name: "Postgres",
      description:
        "The postgres: backend in CofferStores' built-in registry (builds postgres-nio and SwiftNIO)."),
    .trait(
      name: "Remote",
      description:
        "The coffer+http: and coffer+https: backend in CofferStores' built-in registry (builds async-http-client)."
    ),
    .trait(
      name: "Server",
      description: "`coffer serve` and the embeddable CofferServer (builds Hummingbird and SwiftNIO)."),
    .default(enabledTraits: ["SQLite", "LMDB"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
    // API-only: the core counts and traces through them; an app bootstraps the backends it wants.
    .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    // `coffer serve --metrics`: the Prometheus text format at /metrics.
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    // `coffer serve --otlp-endpoint`: spans exported over OTLP/HTTP. Only the HTTP exporter: the
    // gRPC one would build grpc-swift for a choice the standard variables can make another way.
    .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
    .package(
      url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: ["JSON", "YAML"]),
    // Every major the macro builds with, proven by scripts/check-swift-syntax: an app whose other
    // macro packages need one of them still resolves.
    .package(url: "https://github.com/swiftlang/swift-syntax", "602.0.0"..<"604.0.0"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
  ],
  targets: [
    .target(
      name: "Coffer",
      dependencies: [
        .product(name: "Logging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
      ],
      swiftSettings: upcoming),
    .target(name: "CofferMemory", dependencies: ["Coffer"], swiftSettings: upcoming),
    .target(
      name: "CofferPlist", dependencies: ["Coffer", .product(name: "Logging", package: "swift-log")],
      swiftSettings: upcoming),
    // The SQL both SQL backends build their statements with, each in its own dialect: no engine
    // library, no trait, no product (`import Coffer` never sees it).
    .target(name: "CofferSQL", dependencies: ["Coffer"], swiftSettings: upcoming),
    // The JSON shapes `coffer serve` and the coffer+http client exchange, written once for both: no
    // product, no dependency beyond the core.
    .target(name: "CofferWire", dependencies: ["Coffer"], swiftSettings: upcoming),
    // The client of a served store: `coffer+http://`, behind the `Remote` trait.
    .target(
      name: "CofferRemote",
      dependencies: [
        "Coffer", "CofferWire", "CofferSync", .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: upcoming),
    .systemLibrary(
      name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
    .target(
      name: "CofferSQLite",
      dependencies: ["Coffer", "CofferSQL", "CSQLite", .product(name: "Logging", package: "swift-log")],
      swiftSettings: upcoming),
    .systemLibrary(name: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]),
    .target(
      name: "CofferLMDB", dependencies: ["Coffer", "CLMDB", .product(name: "Logging", package: "swift-log")],
      swiftSettings: upcoming),
    .target(
      name: "CofferPostgres",
      dependencies: [
        "Coffer", "CofferSQL", .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      swiftSettings: upcoming),
    .macro(
      name: "CofferMacroPlugin",
      dependencies: [
        .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
        .product(name: "SwiftDiagnostics", package: "swift-syntax"),
        .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
      ],
      swiftSettings: upcoming),
    // What the code `@Storable` generates calls; `CofferMacros` re-exports it, so an app that
    // imports only `Coffer` never sees it.
    .target(name: "CofferMacroSupport", dependencies: ["Coffer"], swiftSettings: upcoming),
    .target(
      name: "CofferMacros", dependencies: ["Coffer", "CofferMacroSupport", "CofferMacroPlugin"],
      swiftSettings: upcoming),
    .target(
      name: "CofferStores",
      dependencies: [
        "Coffer", "CofferMemory", "CofferPlist",
        .target(name: "CofferSQLite", condition: .when(traits: ["SQLite"])),
        .target(name: "CofferLMDB", condition: .when(traits: ["LMDB"])),
        .target(name: "CofferPostgres", condition: .when(traits: ["Postgres"])),
        .target(name: "CofferRemote", condition: .when(traits: ["Remote"])),
      ],
      swiftSettings: upcoming),
    // Offline-first sync between any two stores over their change feeds (issue 46): a library of
    // its own, so `import Coffer` does not show it; nothing beyond the core and the wire forms of
    // its messages (CofferWire, no HTTP: the server and the remote backend carry them).
    .target(name: "CofferSync", dependencies: ["Coffer", "CofferWire"], swiftSettings: upcoming),
    // The data tools `coffer` runs (copy, export, import, verify, inspect), outside the core so
    // that `import Coffer` shows only what an app uses.
    .target(name: "CofferTools", dependencies: ["Coffer"], swiftSettings: upcoming),
    .target(
      name: "CofferConfiguration",
      dependencies: ["Coffer", .product(name: "Configuration", package: "swift-configuration")],
      swiftSettings: upcoming),
    // `coffer serve`: any store behind a JSON HTTP API (issue 44). Only the `Server` trait makes the
    // CLI build it.
    .target(
      name: "CofferServer",
      dependencies: [
        "Coffer", "CofferWire", "CofferSync", .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdCore", package: "hummingbird"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      // The browser viewer's page, script and style (issue 45), compiled into the library so
      // that a `coffer` binary needs no files beside it.
      resources: [
        .embedInCode("Viewer/Assets/index.html"), .embedInCode("Viewer/Assets/login.html"),
        .embedInCode("Viewer/Assets/login-failed.html"), .embedInCode("Viewer/Assets/viewer.js"),
        .embedInCode("Viewer/Assets/viewer.css"),
      ],
      swiftSettings: upcoming),
    // posix_spawn for the tools, the conformance suite's second process and the tests: harness
    // code, kept out of the core and out of every product.
    .target(name: "CofferChildProcess", dependencies: ["Coffer"], swiftSettings: upcoming),
    .target(
      name: "CofferConformance",
      dependencies: [
        "Coffer", "CofferChildProcess", "CofferMacroSupport", "CofferTools",
        .product(name: "Logging", package: "swift-log"),
        // Recording backends, which the secrets checks search for stored values.
        .product(name: "MetricsTestKit", package: "swift-metrics"),
        .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
      ],
      path: "Conformance",
      swiftSettings: upcoming),
    // The domain-protocol chat example behind `coffer demo` and the CLI tests: a target, not a
    // product, so that no client can come to depend on it.
    .target(
      name: "CofferChatExample", dependencies: ["Coffer", "CofferMacros"], path: "Examples/Chat",
      swiftSettings: upcoming),
    // What `coffer-dev soak` counts, checks and prints, apart from the command so that tests can
    // import it (an executable's own module cannot be imported on every platform).
    .target(name: "CofferSoak", swiftSettings: upcoming),
    .executableTarget(
      name: "coffer",
      dependencies: [
        "Coffer", "CofferStores", "CofferConformance", "CofferConfiguration", "CofferChatExample",
        "CofferSync", "CofferTools", "CofferWire",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .target(name: "CofferServer", condition: .when(traits: ["Server"])),
        .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
        .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Server"])),
        .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Server"])),
        .product(name: "OTel", package: "swift-otel", condition: .when(traits: ["Server"])),
        .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Server"])),
        .product(
          name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
      ],
      swiftSettings: upcoming),
    // The harness commands Coffer's own tests and reliability runs start (`soak`, `churn`): built
    // with the package for `make test`/`make soak`, no product, so `coffer` holds only user tools.
    .executableTarget(
      name: "coffer-dev",
      dependencies: [
        "Coffer", "CofferChildProcess", "CofferStores", "CofferSoak",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: upcoming),
    // Helpers the backends' tests share: temporary folders, tiny file systems, killed writers.
    .target(
      name: "CofferTestSupport", dependencies: ["Coffer", "CofferChildProcess"], path: "Tests/Support",
      swiftSettings: upcoming),
    .testTarget(
      name: "CofferTests", dependencies: ["Coffer", "CofferMemory", "CofferTools"], swiftSettings: upcoming),
    .testTarget(
      name: "CofferChildProcessTests", dependencies: ["CofferChildProcess"], swiftSettings: upcoming),
    .testTarget(
      name: "CofferPlistTests",
      dependencies: [
        "Coffer", "CofferChildProcess", "CofferPlist", "CofferStores", "CofferTestSupport", "coffer",
        "coffer-dev",
      ],
      swiftSettings: upcoming),
    .testTarget(
      name: "CofferConformanceTests",
      dependencies: [
        "Coffer", "CofferMemory", "CofferStores", "CofferConformance", "CofferTestSupport", "CofferTools",
        "coffer",
      ],
      swiftSettings: upcoming),
    .testTarget(
      name: "CofferConfigurationTests",
      dependencies: ["Coffer", "CofferStores", "CofferConfiguration"], swiftSettings: upcoming),
    .testTarget(
      name: "CofferSQLiteTests",
      dependencies: [
        "Coffer", "CofferChildProcess", "CofferSQLite", "CofferStores", "CofferConformance",
        "CofferTestSupport", "CofferTools", "coffer", "coffer-dev",
        .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
      ],
      swiftSettings: upcoming),
    .testTarget(
      name: "CofferLMDBTests",
      dependencies: [
        "Coffer", "CofferChildProcess", "CofferLMDB", "CofferMacros", "CofferStores", "CofferConformance",
        "CofferTestSupport", "coffer", "coffer-dev",
      ],
      swiftSettings: upcoming),
    .testTarget(
      name: "CofferPostgresTests",
      dependencies: [
        "Coffer", "CofferChildProcess", "CofferPostgres", "CofferStores", "CofferConformance",
        "CofferTestSupport", "coffer",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      swiftSettings: upcoming),
    .testTarget(
      name: "CofferGraphTests",
      dependencies: ["Coffer", "CofferMemory", "CofferStores", "CofferTestSupport"],
      swiftSettings: upcoming),
    .testTarget(
      name: "CofferMacroTests",
      dependencies: [
        "Coffer", "CofferChildProcess", "CofferMacros", "CofferMacroPlugin", "CofferMemory",
        .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
      ],
      swiftSettings: upcoming),
    .testTarget(
      name: "CofferCLITests",
      dependencies: [
        "coffer", "coffer-dev", "Coffer", "CofferChildProcess", "CofferMemory", "CofferChatExample",
        "CofferStores", "CofferMacros", "CofferConformance", "CofferSoak", "CofferTestSupport", "CofferTools",
      ],
      swiftSettings: upcoming),
    .testTarget(
      name: "CofferServerTests",
      dependencies: [
        "Coffer", "CofferChildProcess", "CofferMemory", "CofferServer", "CofferStores", "CofferTestSupport",
        "CofferWire", "coffer",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdTesting", package: "hummingbird"),
      ],
      swiftSettings: upcoming),
    // The coffer+http client against a server started in the test process: the conformance
    // suite over the wire, and its faults.
    .testTarget(
      name: "CofferRemoteTests",
      dependencies: [
        "Coffer", "CofferConformance", "CofferRemote", "CofferServer", "CofferStores", "CofferTestSupport",
        "CofferWire", "coffer",
      ],
      swiftSettings: upcoming),
    .testTarget(
      name: "CofferSyncTests",
      dependencies: [
        "Coffer", "CofferChatExample", "CofferChildProcess", "CofferMemory", "CofferServer", "CofferStores",
        "CofferSync", "CofferTestSupport", "coffer",
      ],
      swiftSettings: upcoming),
  ]
)
