@_spi(Backend) import Coffer
import Foundation
import Synchronization

/// A number several tasks change and read at once.
private final class Tally: Sendable {
  private let atomic = Atomic<Int>(0)
  var value: Int { atomic.load(ordering: .sequentiallyConsistent) }
  func add(_ amount: Int) { atomic.add(amount, ordering: .sequentiallyConsistent) }
}

extension ConformanceSuite {
  static let blockingChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "concurrency.readers-progress-while-writers-commit", requires: [.durable],
      "While as many tasks as there are cores commit batches one after another, a reader task in the same "
        + "process keeps reading while they are all committing: a commit's fsync and file writes never hold "
        + "one of the Swift concurrency pool's threads."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let writers = max(2, ProcessInfo.processInfo.activeProcessorCount)
      let commitsEach = 40
      let started = Tally()
      let finished = Tally()
      // Writers in the middle of a commit, and reads that completed while every writer was.
      let committing = Tally()
      let reads = Tally()
      try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<writers {
          group.addTask {
            started.add(1)
            defer { finished.add(1) }
            for commit in 0..<commitsEach {
              let id = Int64(10_000 + writer * commitsEach + commit)
              committing.add(1)
              defer { committing.add(-1) }
              try await store.insert(Item(id: id, name: "w\(writer)", rank: id, score: nil, flag: true))
            }
          }
        }
        group.addTask {
          while started.value < writers { await Task.yield() }
          while finished.value < writers {
            _ = try await store.get(Item.self, id: 3)
            if committing.value == writers { reads.add(1) }
            await Task.yield()
          }
        }
        try await group.waitForAll()
      }
      // A commit that blocked its pool thread would leave the reader no thread while every
      // writer commits: it would complete no read then.
      let wanted = 10
      try expect(
        reads.value >= wanted,
        "\(reads.value) reads completed while all \(writers) writer tasks were committing (\(writers * commitsEach) "
          + "commits); at least \(wanted) should have: the commits held the concurrency pool's threads")
      try expectEqual(
        try await store.query(Item.self).count(), Item.sample.count + writers * commitsEach, "rows stored")
    }
  ]
}
