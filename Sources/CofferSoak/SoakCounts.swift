/// What one process of a soak counted over some time.
package struct SoakCounts: Sendable, Equatable {
  /// Transactions that committed.
  package var commits = 0
  /// Snapshot reads that completed (each one checked).
  package var reads = 0
  /// Runs of a transaction's body again after a conflict, inside ``Store/transaction(retries:_:)``.
  package var retries = 0
  /// Transactions that still conflicted after every retry (the `conflict` reached the caller).
  package var exhausted = 0
  /// Reads that broke the invariant.
  package var violations = 0
  /// Other failures, by ``CofferError/Code`` name (`other` for an error of another type).
  package var errors: [String: Int] = [:]

  /// Counts with these values; zero for those not given.
  package init(
    commits: Int = 0, reads: Int = 0, retries: Int = 0, exhausted: Int = 0, violations: Int = 0,
    errors: [String: Int] = [:]
  ) {
    self.commits = commits
    self.reads = reads
    self.retries = retries
    self.exhausted = exhausted
    self.violations = violations
    self.errors = errors
  }

  /// How many failures ``errors`` holds.
  package var errorCount: Int { errors.values.reduce(0, +) }

  /// Adds `other`'s counts to these.
  package mutating func add(_ other: SoakCounts) {
    commits += other.commits
    reads += other.reads
    retries += other.retries
    exhausted += other.exhausted
    violations += other.violations
    errors.merge(other.errors, uniquingKeysWith: +)
  }
}
