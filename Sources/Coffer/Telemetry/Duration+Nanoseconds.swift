extension Duration {
  /// The duration in whole nanoseconds, `Int64.max` for one too long to count so: what timers,
  /// the statement log and spans record, and what NIO's timeouts take.
  package var nanoseconds: Int64 {
    let (seconds, attoseconds) = components
    let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    return overflow ? .max : whole &+ attoseconds / 1_000_000_000
  }
}
