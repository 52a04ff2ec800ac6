import Coffer

extension BackendRegistry {
  /// Registers the `sqlite:` scheme.
  public mutating func registerSQLite() {}
}
