extension StoreURLSource {
  /// A sentence to append to an error about the URL: where it came from and what to change.
  var advice: String {
    switch self {
    case .explicit:
      "The URL was given explicitly (for example with --store); correct that value."
    case .environment:
      "The URL came from \(StoreLocator.storeVariable); correct or unset that environment variable."
    case .configFile(let name):
      "The URL came from \(StoreLocator.storeKey) in \(name); correct it there."
    case .fallback:
      "The URL is the program's fallback, used because no store was configured; set "
        + "\(StoreLocator.storeVariable) or pass a store URL."
    }
  }
}
