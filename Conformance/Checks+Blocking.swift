@_spi(Backend) import Coffer
import CofferChildProcess
import Foundation
import Logging
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
      let commitsEach = 80
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
    },
    ConformanceCheck(
      "concurrency.writer-progresses-while-readers-read", requires: [.reopenable],
      "While twice as many tasks as there are cores read in a loop, another task's writes complete one after "
        + "another: reads that finish without suspending never keep the Swift concurrency pool's threads "
        + "from a writer whose commit is done, or from any other task, until the readers stop. Runs in a "
        + "process of its own, whose pool nothing else uses."
    ) { context in
      let child = try childProgram(of: context, as: "the readers and the writer")
      let url = context.target.scratchURL(in: context.directory, name: "\(context.checkID)-store")
      let log = context.directory + "/child.log"
      let process = try startChild(
        child, [url.description, readersBesideWriter, String(besideWrites)], log: log)
      let termination = await process.waitUntilExit()
      await context.target.removeScratch(url)
      guard termination == .exited(0) else {
        let printed = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        throw CheckFailure(
          "The process with the readers and the writer ended with \(termination): \(printed)")
      }
    },
  ]
}

extension ConformanceSuite {
  /// The child argument that runs ``runReadersBesideWriter(url:registry:writes:)``.
  static let readersBesideWriter = "readers-beside-writer"
  /// How many writes the writer makes beside the readers.
  static let besideWrites = 20

  /// The child side of `concurrency.writer-progresses-while-readers-read`: in a store at `url`
  /// holding ``Item/sample``, twice as many tasks as there are cores read in a loop while another
  /// inserts `writes` items one at a time; the readers stop when the writes are done. Throws when
  /// a reader saw 30 seconds pass first, far longer than the writes take when reads take turns.
  static func runReadersBesideWriter(
    url: String, registry: BackendRegistry, writes: Int, logger: Logger? = nil
  ) async throws {
    let store = Store(backend: try await registry.open(url, logger: logger))
    try await store.insert(Item.sample)
    let readers = 2 * max(2, ProcessInfo.processInfo.activeProcessorCount)
    let running = Tally()
    let written = Tally()
    let gaveUp = Tally()
    let deadline = ContinuousClock.now + .seconds(30)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<readers {
        group.addTask {
          running.add(1)
          while written.value < writes {
            _ = try await store.get(Item.self, id: 3)
            if ContinuousClock.now >= deadline {
              gaveUp.add(1)
              return
            }
          }
        }
      }
      group.addTask {
        while running.value < readers { await Task.yield() }
        for write in 0..<writes {
          let id = Int64(20_000 + write)
          try await store.insert(Item(id: id, name: "written", rank: id, score: nil, flag: false))
          written.add(1)
        }
      }
      try await group.waitForAll()
    }
    let stored = try await store.query(Item.self).count()
    try await store.close()
    guard gaveUp.value == 0 else {
      throw CheckFailure(
        "\(readers) tasks read in a loop for 30 seconds, and \(written.value) of \(writes) writes beside them "
          + "completed by then: the reads kept the concurrency pool's threads from the writer")
    }
    guard stored == Item.sample.count + writes else {
      throw CheckFailure("\(stored) items stored after the writes; \(Item.sample.count + writes) expected")
    }
  }
}
