// swift-tools-version: 6.2
import PackageDescription

/// libFuzzer targets for Coffer's decoders of untrusted input. A package of its own, built only
/// with `-sanitize=fuzzer,address` (`make fuzz`), so that no normal build links them. Each
/// target is a library-style module (`-parse-as-library`) whose entry point hands libFuzzer's
/// driver the function to test (`FuzzDriver`).
///
/// The `fuzz-store-url`, `fuzz-plist-file` and `fuzz-jsonl-import` targets go through whole
/// paths (a file opened with its lock, an import through a `Store`); the others call one decoder
/// each, in memory, through the `Fuzzing` SPI of the module that owns it, fast enough for
/// millions of executions. `FuzzSupport` holds what those share (seeds, round-trip checks).
let fuzzSettings: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]

let package = Package(
  name: "CofferFuzz",
  platforms: [.macOS(.v15)],
  dependencies: [.package(name: "Coffer", path: "..", traits: [])],
  targets: [
    .target(name: "FuzzDriver"),
    .target(
      name: "FuzzSupport",
      dependencies: [
        .product(name: "Coffer", package: "Coffer"), .product(name: "CofferTools", package: "Coffer"),
      ]),
    .target(
      name: "FuzzPlist",
      dependencies: [
        "FuzzSupport", .product(name: "Coffer", package: "Coffer"),
        .product(name: "CofferPlist", package: "Coffer"),
      ]),
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
        .product(name: "CofferMemory", package: "Coffer"), .product(name: "CofferTools", package: "Coffer"),
      ],
      swiftSettings: fuzzSettings),
    .executableTarget(
      name: "fuzz-binary-plist",
      dependencies: ["FuzzDriver", "FuzzSupport", .product(name: "Coffer", package: "Coffer"), "FuzzPlist"],
      swiftSettings: fuzzSettings),
    .executableTarget(
      name: "fuzz-xml-plist",
      dependencies: ["FuzzDriver", "FuzzSupport", .product(name: "Coffer", package: "Coffer"), "FuzzPlist"],
      swiftSettings: fuzzSettings),
    .executableTarget(
      name: "fuzz-lmdb-row",
      dependencies: [
        "FuzzDriver", "FuzzSupport", .product(name: "Coffer", package: "Coffer"),
        .product(name: "CofferLMDB", package: "Coffer"),
      ],
      swiftSettings: fuzzSettings),
    .executableTarget(
      name: "fuzz-lmdb-key",
      dependencies: [
        "FuzzDriver", "FuzzSupport", .product(name: "Coffer", package: "Coffer"),
        .product(name: "CofferLMDB", package: "Coffer"),
      ],
      swiftSettings: fuzzSettings),
    .executableTarget(
      name: "fuzz-lmdb-catalog",
      dependencies: [
        "FuzzDriver", "FuzzSupport", .product(name: "Coffer", package: "Coffer"),
        .product(name: "CofferLMDB", package: "Coffer"),
      ],
      swiftSettings: fuzzSettings),
    .executableTarget(
      name: "fuzz-sqlite-catalog",
      dependencies: [
        "FuzzDriver", "FuzzSupport", .product(name: "Coffer", package: "Coffer"),
        .product(name: "CofferSQLite", package: "Coffer"),
      ],
      swiftSettings: fuzzSettings),
    .executableTarget(
      name: "fuzz-jsonl-line",
      dependencies: [
        "FuzzDriver", "FuzzSupport", .product(name: "Coffer", package: "Coffer"),
        .product(name: "CofferTools", package: "Coffer"),
      ],
      swiftSettings: fuzzSettings),
  ]
)
