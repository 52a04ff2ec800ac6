import Foundation

/// The store URL a command uses, and where that choice came from.
struct StoreChoice: Sendable, Equatable {
  /// Where a store URL came from, in the order they are looked at.
  enum Source: Sendable, Equatable {
    /// The `--store` option.
    case option
    /// The `COFFER_STORE` environment variable.
    case environment
    /// A configuration file, with its path.
    case configFile(String)
    /// The URL built into the tool.
    case builtInDefault
  }

  /// The URL `coffer` uses when nothing else names one. Only the in-memory backend exists
  /// today; this becomes a file store when the plist and SQLite backends land.
  static let builtInDefault = "memory:"

  /// The URL as given.
  var url: String
  /// Where it came from.
  var source: Source

  /// The source, as a sentence fragment for the demo's output.
  var explanation: String {
    switch source {
    case .option: "the --store option"
    case .environment: "the COFFER_STORE environment variable"
    case .configFile(let path): "the configuration file \(path)"
    case .builtInDefault: "the built-in default (no --store, no COFFER_STORE, no configuration file)"
    }
  }
}
