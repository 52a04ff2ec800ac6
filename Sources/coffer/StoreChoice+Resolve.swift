import Foundation

extension StoreChoice {
  /// Picks the store URL: the option if given, else `COFFER_STORE`, else the built-in default.
  static func resolve(option: String?, environment: [String: String]) -> StoreChoice {
    if let option { return StoreChoice(url: option, source: .option) }
    if let url = environment["COFFER_STORE"], !url.isEmpty {
      return StoreChoice(url: url, source: .environment)
    }
    return StoreChoice(url: builtInDefault, source: .builtInDefault)
  }
}
