/// What every read of a soak must see: all the accounts, and balances that sum to the total
/// they were seeded with. The transfers only move amounts, so any other sum means a read saw
/// half of a transfer, or a transfer was applied twice or lost half of itself.
package struct SoakLedger: Sendable, Equatable {
  /// How a read broke the invariant.
  package enum Violation: Sendable, Equatable, CustomStringConvertible {
    /// The read returned this many accounts instead of all of them.
    case accountCount(Int)
    /// The balances read summed to something else than the total.
    case total

    /// What a person reads; no balance or sum, only what went wrong.
    package var description: String {
      switch self {
      case .accountCount(let seen): "a snapshot read \(seen) accounts, not all of them"
      case .total: "a snapshot's balances did not sum to the total the accounts were seeded with"
      }
    }
  }

  /// How many accounts the store holds.
  package var accounts: Int
  /// What their balances sum to.
  package var total: Int64

  /// The ledger of `accounts` accounts whose balances sum to `total`.
  package init(accounts: Int, total: Int64) {
    self.accounts = accounts
    self.total = total
  }

  /// The ledger of `accounts` accounts seeded with `balance` each.
  package static func seeded(accounts: Int, balance: Int64) -> SoakLedger {
    SoakLedger(accounts: accounts, total: Int64(accounts) * balance)
  }

  /// `nil` when `balances`, all the balances one read returned, keep the invariant; otherwise
  /// how they break it.
  package func check(_ balances: [Int64]) -> Violation? {
    guard balances.count == accounts else { return .accountCount(balances.count) }
    // Wrapping: a corrupt balance must show as a violation, not end the process.
    return balances.reduce(0, &+) == total ? nil : .total
  }
}
