import Coffer
import CofferSoak
import Foundation

/// One account of `coffer-dev soak`: the transfers move amounts between balances, so the sum of all
/// balances never changes.
struct SoakAccount: Storable {
  var id: Int64
  var balance: Int64
}

/// The writer and reader tasks of one soak process, against one store.
struct SoakWorkload: Sendable {
  /// The store every task uses.
  var store: Store
  /// What every read must see.
  var ledger: SoakLedger
  /// How many writer tasks move amounts.
  var writers: Int
  /// How many reader tasks check the invariant.
  var readers: Int
  /// Where problems are reported (standard error), e.g. "coffer-dev soak child 1".
  var speaker: String
  /// What the tasks counted since the last ``take()``.
  let tally = LockedState(SoakCounts())
  /// The error codes and violations already reported on standard error: each only once.
  private let reported = LockedState(Set<String>())

  /// A workload; `speaker` prefixes what it reports.
  init(store: Store, ledger: SoakLedger, writers: Int, readers: Int, speaker: String) {
    self.store = store
    self.ledger = ledger
    self.writers = writers
    self.readers = readers
    self.speaker = speaker
  }

  /// The counts since the last call, leaving zero.
  func take() -> SoakCounts {
    tally.withLock { counts in
      defer { counts = SoakCounts() }; return counts
    }
  }

  /// Runs the writers and readers from `start` until `deadline`; each finishes what it started.
  func run(from start: ContinuousClock.Instant, until deadline: ContinuousClock.Instant) async {
    try? await Task.sleep(until: start, clock: .continuous)
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<writers {
        group.addTask { while ContinuousClock.now < deadline { await transfer() } }
      }
      for _ in 0..<readers {
        group.addTask {
          while ContinuousClock.now < deadline {
            await read()
            await Task.yield()
          }
        }
      }
    }
  }

  /// Moves a random amount between two random accounts in one transaction.
  private func transfer() async {
    let count = Int64(ledger.accounts)
    let from = Int64.random(in: 1...count)
    var to = Int64.random(in: 1...(count - 1))
    if to >= from { to += 1 }
    let amount = Int64.random(in: 1...20)
    var runs = 0
    do {
      try await store.transaction { tx in
        runs += 1
        guard var source = try await tx.get(SoakAccount.self, id: from),
          var target = try await tx.get(SoakAccount.self, id: to)
        else {
          throw CofferError(
            .notFound, "An account of the soak is missing: a transfer found no row for one of its two ids.",
            entity: SoakAccount.entityName)
        }
        source.balance -= amount
        target.balance += amount
        try tx.update(source)
        try tx.update(target)
      }
      tally.withLock { counts in
        counts.commits += 1
        counts.retries += runs - 1
      }
    } catch let error as CofferError where error.code == .conflict {
      tally.withLock { counts in
        counts.exhausted += 1
        counts.retries += max(0, runs - 1)
      }
      reportOnce("exhausted", "a transfer still conflicted after \(Store.defaultRetries) retries: \(error)")
    } catch {
      await failed(error)
    }
  }

  /// Reads every account in one snapshot and checks the invariant.
  private func read() async {
    do {
      let accounts = try await store.snapshot { snapshot in try await snapshot.query(SoakAccount.self).fetch()
      }
      let violation = ledger.check(accounts.map(\.balance))
      tally.withLock { counts in
        counts.reads += 1
        if violation != nil { counts.violations += 1 }
      }
      if let violation { reportOnce("violation", "invariant violated: \(violation)") }
    } catch {
      await failed(error)
    }
  }

  /// Counts `error` by code, reports the first of each code, and pauses a little so that a
  /// store that fails every call does not spin.
  private func failed(_ error: any Error) async {
    let code = (error as? CofferError)?.code.name ?? "other"
    tally.withLock { $0.errors[code, default: 0] += 1 }
    // A CofferError's text names entities, ids and fields, never values; another error's
    // text is not known to be free of them, so only its type is shown.
    let text = (error as? CofferError)?.description ?? "an error of type \(type(of: error))"
    reportOnce(code, "first \(code) error: \(text)")
    try? await Task.sleep(for: .milliseconds(10))
  }

  /// Writes `line` on standard error the first time `key` is reported.
  private func reportOnce(_ key: String, _ line: String) {
    if reported.withLock({ $0.insert(key).inserted }) { Terminal.complain("\(speaker): \(line)") }
  }
}
