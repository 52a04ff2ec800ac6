/// Where the store URL that ``StoreLocator`` chose came from.
///
/// Show it next to the URL so that a person knows which setting to change:
///
/// ```swift
/// let (url, source) = try await StoreLocator().resolve(explicit: nil, fallback: "memory:")
/// print("store: \(url) (\(source))")  // store: sqlite:///var/app/db.sqlite (from COFFER_STORE)
/// ```
public enum StoreURLSource: Sendable, Equatable {
  /// Given by the caller, for example with a `--store` option.
  case explicit
  /// Read from the `COFFER_STORE` environment variable.
  case environment
  /// Read from the key `coffer.store` of the configuration file (or configuration reader) named
  /// by the associated value.
  case configFile(String)
  /// The program's default, used because nothing else named a store.
  case fallback
}

extension StoreURLSource: CustomStringConvertible {
  /// A short phrase for messages: `given explicitly`, `from COFFER_STORE`,
  /// `from coffer.store in /etc/app.yaml`, `the default`.
  public var description: String {
    switch self {
    case .explicit: "given explicitly"
    case .environment: "from \(StoreLocator.storeVariable)"
    case .configFile(let name): "from \(StoreLocator.storeKey) in \(name)"
    case .fallback: "the default"
    }
  }
}
