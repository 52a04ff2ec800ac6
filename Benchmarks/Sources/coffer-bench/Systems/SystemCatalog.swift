import Coffer
import CofferStores

/// Every system the suite measures, in table order, keyed by a short name the command line and
/// the memory probe use. Coffer backends this build does not register are left out.
enum SystemCatalog {
  static let all: [(key: String, make: @Sendable () -> any BenchSystem)] = [
    (
      "coffer-sqlite",
      { CofferSystem(name: "Coffer sqlite", scheme: "sqlite", file: "coffer.sqlite", durable: true) }
    ),
    ("raw-sqlite", { RawSQLiteSystem() }),
    ("grdb", { GRDBSystem() }),
    (
      "coffer-lmdb", { CofferSystem(name: "Coffer lmdb", scheme: "lmdb", file: "coffer-lmdb", durable: true) }
    ),
    ("raw-lmdb", { RawLMDBSystem() }),
    ("coffer-memory", { CofferSystem(name: "Coffer memory", scheme: "memory", file: "", durable: false) }),
    (
      "coffer-plist",
      {
        CofferSystem(
          name: "Coffer plist", scheme: "plist", file: "coffer.plist", options: "?format=binary",
          durable: true)
      }
    ),
    ("dictionary", { DictionarySystem() }),
    (
      "coffer-sqlite-codable",
      {
        CofferSystem(
          name: "Coffer sqlite", scheme: "sqlite", file: "coffer.sqlite", durable: true, codec: .codable)
      }
    ),
    (
      "coffer-lmdb-codable",
      {
        CofferSystem(name: "Coffer lmdb", scheme: "lmdb", file: "coffer-lmdb", durable: true, codec: .codable)
      }
    ),
    (
      "coffer-memory-codable",
      { CofferSystem(name: "Coffer memory", scheme: "memory", file: "", durable: false, codec: .codable) }
    ),
    (
      "coffer-plist-codable",
      {
        CofferSystem(
          name: "Coffer plist", scheme: "plist", file: "coffer.plist", options: "?format=binary",
          durable: true,
          codec: .codable)
      }
    ),
  ]

  /// The keys of the systems available in this build.
  static var available: [String] {
    let schemes = Set(BackendRegistry.makeBuiltIn().schemes)
    return all.map(\.key).filter { key in
      guard key.hasPrefix("coffer-") else { return true }
      let backend = key.dropFirst("coffer-".count).split(separator: "-").first.map(String.init) ?? ""
      return schemes.contains(backend)
    }
  }

  static func make(_ key: String) -> (any BenchSystem)? { all.first { $0.key == key }?.make() }
}
