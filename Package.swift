// swift-tools-version: 6.2
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
    .library(name: "CofferStores", targets: ["CofferStores"]),
    .library(name: "CofferConfiguration", targets: ["CofferConfiguration"]),
    .library(name: "CofferConformance", targets: ["CofferConformance"]),
    .library(name: "CofferChatExample", targets: ["CofferChatExample"]),
    .executable(name: "coffer", targets: ["coffer"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(
      url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: ["JSON", "YAML"]),
  ],
  targets: [
    .target(name: "Coffer", swiftSettings: upcoming),
    .target(name: "CofferMemory", dependencies: ["Coffer"], swiftSettings: upcoming),
    .target(name: "CofferPlist", dependencies: ["Coffer"], swiftSettings: upcoming),
    .target(
      name: "CofferStores", dependencies: ["Coffer", "CofferMemory", "CofferPlist"], swiftSettings: upcoming),
    .target(
      name: "CofferConfiguration",
      dependencies: ["Coffer", .product(name: "Configuration", package: "swift-configuration")],
      swiftSettings: upcoming),
    .target(
      name: "CofferConformance", dependencies: ["Coffer"], path: "Conformance",
      swiftSettings: upcoming),
    .target(
      name: "CofferChatExample", dependencies: ["Coffer"], path: "Examples/Chat",
      swiftSettings: upcoming),
    .executableTarget(
      name: "coffer",
      dependencies: [
        "Coffer", "CofferStores", "CofferConformance", "CofferConfiguration", "CofferChatExample",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      swiftSettings: upcoming),
    .testTarget(name: "CofferTests", dependencies: ["Coffer", "CofferMemory"], swiftSettings: upcoming),
    .testTarget(
      name: "CofferPlistTests", dependencies: ["Coffer", "CofferPlist", "CofferStores", "coffer"],
      swiftSettings: upcoming),
    .testTarget(
      name: "CofferConformanceTests",
      dependencies: ["Coffer", "CofferMemory", "CofferStores", "CofferConformance"],
      swiftSettings: upcoming),
    .testTarget(
      name: "CofferConfigurationTests",
      dependencies: ["Coffer", "CofferStores", "CofferConfiguration"], swiftSettings: upcoming),
    .testTarget(
      name: "CofferCLITests", dependencies: ["coffer", "CofferChatExample", "CofferStores"],
      swiftSettings: upcoming),
  ]
)
