@_spi(Backend) import Coffer

extension ConformanceSuite {
  static let observationChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "observe.sees-modify-and-transaction", requires: .preconditions,
      "A query observed through a store sees what modify, a transaction and an update by query "
        + "commit through the same store."
    ) { context in
      let store = try await context.store(with: [Versioned(id: 1, version: 0)])
      let latest = LockedState<[Versioned]?>(nil)
      let reader = Task {
        for try await values in store.query(Versioned.self).observe() { latest.withLock { $0 = values } }
      }
      defer { reader.cancel() }
      try await waitFor("the first result", { latest.withLock { $0 } == [Versioned(id: 1, version: 0)] })
      try await store.modify(Versioned.self, id: 1) { $0.version = 1 }
      try await waitFor("a value modify changed", { latest.withLock { $0?.first?.version } == 1 })
      try await store.transaction { tx in
        guard var value = try await tx.get(Versioned.self, id: 1) else { return }
        value.version += 1
        try tx.update(value)
        try tx.insert(Versioned(id: 2, version: 0))
      }
      try await waitFor(
        "what a transaction committed",
        { latest.withLock { $0 } == [Versioned(id: 1, version: 2), Versioned(id: 2, version: 0)] })
      try await store.query(Versioned.self).filter(FieldRef("id") == 2).increment(\.version, by: 5)
      try await waitFor("an increment by query", { latest.withLock { $0?.last?.version } == 5 })
    },
    ConformanceCheck(
      "observe.other-handles", requires: .observesOtherHandles,
      "A query observed through one handle sees commits made through another handle on the same "
        + "store, and after a burst of commits faster than it reads, the latest state arrives."
    ) { context in
      let store = try await context.store(with: [Versioned(id: 1, version: 0)])
      let other = try await context.secondHandle(store)
      let latest = LockedState<[Versioned]?>(nil)
      let reader = Task {
        for try await values in store.query(Versioned.self).observe() { latest.withLock { $0 = values } }
      }
      defer { reader.cancel() }
      try await waitFor("the first result", { latest.withLock { $0 } == [Versioned(id: 1, version: 0)] })
      try await other.insert(Versioned(id: 2, version: 0))
      try await waitFor(
        "a value inserted through the other handle", { latest.withLock { $0?.map(\.id) } == [1, 2] })
      for version in Int64(1)...50 { try await other.update(Versioned(id: 1, version: version)) }
      try await waitFor(
        "the last of 50 updates made through the other handle",
        { latest.withLock { $0?.first?.version } == 50 })
    },
  ]

  /// Waits for `condition`, checking every 10 ms, and fails once 60 s have passed and it has
  /// checked at least 3,000 times. A generous bound: in a full test run on two cores, other
  /// tests' work can hold every pool thread for a minute, the observer's task and this one alike;
  /// counting checks as well as time makes the wait longer only while the waiting task itself is
  /// held back, so it still tells a missed commit from a slow one.
  static func waitFor(_ what: String, _ condition: @Sendable () -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(60)
    var checks = 0
    while !condition() {
      checks += 1
      guard clock.now < deadline || checks < 3_000 else {
        throw CheckFailure("The observer never saw \(what) (waited 60 s and checked \(checks) times).")
      }
      try await Task.sleep(for: .milliseconds(10))
    }
  }
}
