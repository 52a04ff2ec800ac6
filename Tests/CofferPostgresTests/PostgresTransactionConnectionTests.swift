import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Synchronization
import Testing

/// An attempt of a transaction holds one pooled connection for its reads and its commit. Holding
/// it must never deadlock and never strand a connection, also on a pool of one connection:
/// reads at once inside the body, a batch beside them, a transaction nested in another, a task
/// the body leaves running, and many transactions at once.
@Suite struct PostgresTransactionConnectionTests {
  /// Fails the test when `body` has not finished after five minutes, instead of hanging: a
  /// deadlock never finishes, so it shows as a failure (its tasks are left behind). Not a speed
  /// bound: each body takes about a second alone, and much longer beside the whole suite.
  func finishes(_ what: String, _ body: @escaping @Sendable () async throws -> Void) async throws {
    let outcome = Mutex<Result<Bool, any Error>?>(nil)
    let finished: Result<Bool, any Error> = await withCheckedContinuation { continuation in
      let answer = { @Sendable (result: Result<Bool, any Error>) in
        let first = outcome.withLock { outcome in
          guard outcome == nil else { return false }
          outcome = result
          return true
        }
        if first { continuation.resume(returning: result) }
      }
      Task {
        do {
          try await body()
          answer(.success(true))
        } catch {
          answer(.failure(error))
        }
      }
      Task {
        try? await Task.sleep(for: .seconds(300))
        answer(.success(false))
      }
    }
    #expect(try finished.get(), "\(what) did not finish: a deadlock")
  }

  @Test func readsAndBatchesAtOnceInsideTransactionsOnAOneConnectionPool() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open(options: ["pool": "1"])
      try await store.insert((1...10).map { FaultCounter(id: Int64($0), value: 0) })
      try await finishes("four tasks of transactions reading at once in their bodies") {
        try await withThrowingTaskGroup(of: Void.self) { group in
          for task in 0..<4 {
            group.addTask {
              for round in 0..<3 {
                try await store.transaction { tx in
                  async let other = store.get(FaultCounter.self, id: 10)
                  async let count = store.query(FaultCounter.self).count()
                  async let inserted: Void = store.insert(
                    FaultCounter(id: Int64(100 + task * 10 + round), value: 1))
                  guard var counter = try await tx.get(FaultCounter.self, id: Int64(1 + task)) else { return }
                  _ = try await (other, count, inserted)
                  counter.value += 1
                  try tx.update(counter)
                }
              }
            }
          }
          try await group.waitForAll()
        }
      }
      for task in 0..<4 {
        #expect(try await store.get(FaultCounter.self, id: Int64(1 + task))?.value == 3)
      }
      #expect(try await store.query(FaultCounter.self).count() == 22)
      try await store.close()
    }
  }

  /// A model no store has prepared before the transaction below reads it.
  struct PinProbe: Storable, Equatable {
    var id: Int64
    var note: String
  }

  @Test func aTransactionThatPreparesAnEntityOnAOneConnectionPool() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open(options: ["pool": "1"])
      try await store.insert([FaultCounter(id: 1, value: 0)])
      try await finishes("a transaction preparing an entity while it holds the only connection") {
        try await store.transaction { tx in
          guard var counter = try await tx.get(FaultCounter.self, id: 1) else { return }
          // Preparing the entity takes a connection of its own.
          counter.value = Int64(try await store.query(PinProbe.self).count()) + 1
          try tx.update(counter)
        }
      }
      #expect(try await store.get(FaultCounter.self, id: 1)?.value == 1)
      try await store.insert([PinProbe(id: 1, note: "after")])
      #expect(try await store.query(PinProbe.self).count() == 1)
      try await store.close()
    }
  }

  @Test func aTransactionInsideATransactionOnAOneConnectionPool() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open(options: ["pool": "1"])
      try await store.insert([FaultCounter(id: 1, value: 0), FaultCounter(id: 2, value: 0)])
      try await finishes("a nested transaction") {
        try await store.transaction { tx in
          guard var outer = try await tx.get(FaultCounter.self, id: 1) else { return }
          try await store.transaction { inner in
            guard var counter = try await inner.get(FaultCounter.self, id: 2) else { return }
            counter.value += 1
            try inner.update(counter)
          }
          outer.value = try await store.get(FaultCounter.self, id: 2)?.value ?? -1
          try tx.update(outer)
        }
      }
      #expect(try await store.get(FaultCounter.self, id: 1)?.value == 1)
      #expect(try await store.get(FaultCounter.self, id: 2)?.value == 1)
      try await store.close()
    }
  }

  @Test func aTaskTheBodyLeavesRunningStillReadsAfterTheTransaction() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open(options: ["pool": "1"])
      try await store.insert([FaultCounter(id: 1, value: 0)])
      let gate = AsyncStream<Void>.makeStream()
      let left = try await store.transaction { tx in
        guard var counter = try await tx.get(FaultCounter.self, id: 1) else {
          return Task<Int64?, any Error> { nil }
        }
        counter.value += 1
        try tx.update(counter)
        // Reads once the transaction has returned and given its connection back.
        return Task<Int64?, any Error> {
          for await _ in gate.stream { break }
          return try await store.get(FaultCounter.self, id: 1)?.value
        }
      }
      try await finishes("a read by a task a transaction left running") {
        gate.continuation.yield()
        let read = try await left.value
        let modified = try await store.modify(FaultCounter.self, id: 1) { $0.value += 1 }
        #expect(read == 1)
        #expect(modified.value == 2)
      }
      try await store.close()
    }
  }

  @Test func manyTransactionsAtOnceOnASmallPoolAddUp() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open(options: ["pool": "2"])
      try await store.insert((1...4).map { FaultCounter(id: Int64($0), value: 100) })
      try await finishes("eight tasks moving units between four rows") {
        try await withThrowingTaskGroup(of: Void.self) { group in
          for task in 0..<8 {
            group.addTask {
              for round in 0..<10 {
                let from = Int64(1 + (task + round) % 4)
                let to = Int64(1 + (task + round + 1) % 4)
                try await store.transaction(retries: 100) { tx in
                  guard var a = try await tx.get(FaultCounter.self, id: from),
                    var b = try await tx.get(FaultCounter.self, id: to)
                  else { return }
                  a.value -= 1
                  b.value += 1
                  try tx.update(a)
                  try tx.update(b)
                }
              }
            }
          }
          try await group.waitForAll()
        }
      }
      let values = try await store.query(FaultCounter.self).fetch().map(\.value)
      #expect(values.reduce(0, +) == 400)
      try await store.close()
    }
  }
}
