import CofferConfiguration

extension StoreURLSource {
  /// Where the demo's store URL came from, as a phrase for its output.
  var explanation: String {
    switch self {
    case .explicit: "the --store option"
    case .environment: "the \(StoreLocator.storeVariable) environment variable"
    case .configFile(let path): "\(StoreLocator.storeKey) in the configuration file \(path)"
    case .fallback:
      "the built-in default (no --store, no \(StoreLocator.storeVariable), no configuration file)"
    }
  }
}
