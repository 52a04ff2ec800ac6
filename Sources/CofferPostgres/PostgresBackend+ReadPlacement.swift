@_spi(Backend) import Coffer

extension PostgresBackend.Configuration {
  /// Which servers of the URL plain reads go to: `?reads=primary|standby|any`.
  ///
  /// Whatever the placement, writes, transactions (their reads included), snapshots and schema
  /// changes go to the primary. A read goes to a standby only when the standby has replayed
  /// every commit this store made or saw (read-your-writes), is no further behind than
  /// ``PostgresBackend/Configuration/maxStandbyLag``, and answered the last time it was asked;
  /// otherwise it goes to the primary. Docs/PostgreSQL.md describes the rules.
  public enum ReadPlacement: String, Sendable, CaseIterable {
    /// Every read on the primary, as with a single server.
    case primary
    /// Reads spread over the standbys that are usable; on the primary when none is.
    case standby
    /// Reads spread over the primary and the usable standbys.
    case any
  }

  /// Reads `reads=` and `maxStandbyLag=` from `url`; `invalid` makes the error for a bad value.
  mutating func readStandbyOptions(_ url: StoreURL, _ invalid: (String) -> CofferError) throws {
    if let text = url.option("reads") {
      guard let placement = ReadPlacement(rawValue: text.lowercased()) else {
        throw invalid("reads must be primary, standby or any, not '\(text)'")
      }
      reads = placement
    }
    if let text = url.option("maxStandbyLag") {
      guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
        throw invalid("maxStandbyLag must be a number of seconds above 0 and at most 3600, not '\(text)'")
      }
      maxStandbyLag = .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }
  }
}
