// swift-tools-version: 6.2
import PackageDescription

/// The power-loss crash-state explorer (`scripts/crash-states`). A package of its own, like
/// `Fuzz/`, so that no normal build compiles it. The recording shim is plain C, built by the
/// script with `cc -shared` and loaded into the writer with `LD_PRELOAD`, so it is not a target.
let package = Package(
  name: "CofferCrashStates",
  platforms: [.macOS(.v15)],
  dependencies: [.package(name: "Coffer", path: "..", traits: ["SQLite", "LMDB"])],
  targets: [
    .executableTarget(
      name: "crash-states",
      dependencies: [
        .product(name: "Coffer", package: "Coffer"), .product(name: "CofferStores", package: "Coffer"),
      ],
      swiftSettings: [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
        .enableUpcomingFeature("InferIsolatedConformances"),
      ])
  ]
)
