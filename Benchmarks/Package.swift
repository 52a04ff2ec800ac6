// swift-tools-version: 6.2
import PackageDescription

/// The benchmark suite lives in its own package so that library users never resolve or build
/// what it compares against. Run it with
/// `swift run -c release --package-path Benchmarks coffer-bench`.
let package = Package(
  name: "CofferBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "Coffer", path: "..")
  ],
  targets: [
    .executableTarget(
      name: "coffer-bench",
      dependencies: [
        .product(name: "Coffer", package: "Coffer"),
        .product(name: "CofferPlist", package: "Coffer"),
        .product(name: "CofferMacros", package: "Coffer"),
      ],
      swiftSettings: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
      ])
  ]
)
