import Coffer

extension BackendRegistry {
  /// Registers the `lmdb:` scheme.
  public mutating func registerLMDB() {}
}
