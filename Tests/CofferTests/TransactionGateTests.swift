import Foundation
import Testing

@testable import Coffer

/// The gate lets conflicted transactions retry one at a time, and new ones through behind them
/// side by side, never holding it.
@Suite struct TransactionGateTests {
  /// Records which waiters have been let through.
  final class Passed: Sendable {
    private let names = LockedState<[String]>([])
    func add(_ name: String) { names.withLock { $0.append(name) } }
    var all: [String] { names.withLock { $0 } }
  }

  /// Waits (up to 5 s) until `condition` holds.
  func eventually(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
  }

  @Test func newTransactionsWaitForTheHolderThenPassTogetherWithoutHoldingIt() async throws {
    let gate = TransactionGate()
    await gate.acquire()
    let passed = Passed()
    let first = Task {
      await gate.pass()
      passed.add("first")
    }
    let second = Task {
      await gate.pass()
      passed.add("second")
    }
    try await eventually { gate.isContended }
    try await Task.sleep(for: .milliseconds(20))
    #expect(passed.all.isEmpty, "new transactions wait while a conflicted one holds the gate")
    gate.release()
    await first.value
    await second.value
    #expect(Set(passed.all) == ["first", "second"])
    #expect(!gate.isContended, "new transactions that passed do not hold the gate")
    await gate.pass()  // an open gate lets a new transaction through at once
  }

  @Test func aWaitingHolderTakesTheGateAfterThoseThatOnlyWaitedBeforeIt() async throws {
    let gate = TransactionGate()
    await gate.acquire()
    let passed = Passed()
    let newcomer = Task {
      await gate.pass()
      passed.add("newcomer")
    }
    try await eventually { gate.isContended }
    let retrier = Task {
      await gate.acquire()
      passed.add("retrier")
    }
    let late = Task {
      try await Task.sleep(for: .milliseconds(30))
      await gate.pass()
      passed.add("late")
    }
    try await Task.sleep(for: .milliseconds(10))
    gate.release()
    await newcomer.value
    await retrier.value
    try await Task.sleep(for: .milliseconds(40))
    #expect(passed.all == ["newcomer", "retrier"], "the late newcomer waits for the retrier's turn")
    gate.release()
    try await late.value
    #expect(passed.all == ["newcomer", "retrier", "late"])
    #expect(!gate.isContended)
  }
}
