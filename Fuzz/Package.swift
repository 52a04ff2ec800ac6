// swift-tools-version: 6.2
import PackageDescription

/// libFuzzer targets for Coffer's decoders of untrusted input. A package of its own, built only
/// with `-sanitize=fuzzer,address` (`make fuzz`), so that no normal build links them. Each
/// target is a library-style module (`-parse-as-library`) whose entry point hands libFuzzer's
/// driver the function to test (`FuzzDriver`).
let fuzzSettings: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
  name: "CofferFuzz",
  platforms: [.macOS(.v15)],
  dependencies: [.package(name: "Coffer", path: "..", traits: [])],
  targets: [
    .target(name: "FuzzDriver"),
    .executableTarget(
      name: "fuzz-store-url", dependencies: ["FuzzDriver", .product(name: "Coffer", package: "Coffer")],
      swiftSettings: fuzzSettings),
    .executableTarget(
      name: "fuzz-plist-file",
      dependencies: [
        "FuzzDriver", .product(name: "Coffer", package: "Coffer"),
        .product(name: "CofferPlist", package: "Coffer"),
      ],
      swiftSettings: fuzzSettings),
    .executableTarget(
      name: "fuzz-jsonl-import",
      dependencies: [
        "FuzzDriver", .product(name: "Coffer", package: "Coffer"),
        .product(name: "CofferMemory", package: "Coffer"),
      ],
      swiftSettings: fuzzSettings),
  ]
)
