import Coffer

extension Store {
  /// Opens the store a ``StoreLocator`` chooses: `explicit`, else `COFFER_STORE`, else
  /// `coffer.store` in the configuration file, else `fallback`.
  ///
  /// ```swift
  /// let store = try await Store.open(explicit: options.store, fallback: "memory:", registry: .builtIn)
  /// ```
  ///
  /// - Parameters:
  ///   - locator: Where to look; the process environment and `COFFER_CONFIG` unless given.
  ///   - explicit: A URL given directly (a `--store` option), or `nil`.
  ///   - fallback: The URL to use when nothing else names a store.
  ///   - registry: The backends that may open it.
  /// - Throws: The locator's errors (``Coffer/CofferError/Code/invalidURL``,
  ///   ``Coffer/CofferError/Code/invalidConfiguration``); ``Coffer/CofferError/Code/unknownScheme``
  ///   when no backend in `registry` handles the URL; the backend's error on open. URL errors say
  ///   where the URL came from.
  public static func open(
    locator: StoreLocator = StoreLocator(), explicit: String? = nil, fallback: String,
    registry: BackendRegistry
  ) async throws -> Store {
    let (url, source) = try await locator.resolve(explicit: explicit, fallback: fallback)
    do {
      return try await Store.open(url: url, registry: registry)
    } catch var error as CofferError where error.code == .unknownScheme || error.code == .invalidURL {
      error.message += " " + source.advice
      throw error
    }
  }
}
