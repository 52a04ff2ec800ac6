import Foundation

/// A system in the readers benchmark: besides the chat suite's operations, it reads from
/// several readers while one writer commits, and it opens its store again from its files.
protocol ReadWriteSystem: BenchSystem {
  /// Runs one reader per plan and, when `writes` is not empty, one writer that commits them one
  /// at a time, each in its own durable transaction, cycling through them; every side stops at
  /// `deadline`. Raw C runs each side on a thread (and a connection) of its own; a Coffer store
  /// runs each as a task, all sharing the one store, as the handlers of a server share it.
  func readWhileWriting(_ plans: [ReadPlan], writes: [ChatMessage], until deadline: ContinuousClock.Instant)
    async throws -> ReadWriteTally
  /// Closes the store, opens it again from its files as an app does at launch, and reads the
  /// newest 50 messages of `thread`.
  func reopen(readingThread thread: Int64) async throws -> [ChatMessage]
}

/// What one reader reads, in order: point gets by id, and every tenth call a thread page; the
/// `ids` and `threads` are as many.
struct ReadPlan: Sendable {
  var ids: [Int64]
  var threads: [Int64]

  /// Whether call `number` (counted from 0) is a thread page rather than a point get.
  static func isPage(_ number: Int) -> Bool { number % 10 == 9 }
}

/// What one reader did, for the rate and for the check of its answers.
struct ReaderTally: Sendable {
  /// Calls made, gets and pages together.
  var calls = 0
  /// The thread ids of the messages the gets found, added up (-1 for one that was missing).
  var threadSum: Int64 = 0
  /// Messages the pages held, added up.
  var pageRows = 0

  /// Counts a get's answer: the message's thread.
  mutating func count(message: ChatMessage?) {
    threadSum &+= message?.threadID ?? -1
    calls += 1
  }

  /// Counts a page's answer: its length.
  mutating func count(page: [ChatMessage]) {
    pageRows += page.count
    calls += 1
  }

  /// Whether it is time to look at the clock: every 64 calls.
  var checksClock: Bool { calls & 63 == 0 }
}

/// What the readers and the writer of one run did.
struct ReadWriteTally: Sendable {
  var readers: [ReaderTally]
  /// Seconds each commit took, in order.
  var commits: [Double]
}

/// The writer's side, shared by every system: commits `writes` one at a time, cycling, until
/// `deadline`, and returns each commit's seconds.
func commitLoop(
  _ writes: [ChatMessage], until deadline: ContinuousClock.Instant, _ commit: (ChatMessage) throws -> Void
)
  rethrows -> [Double]
{
  var seconds: [Double] = []
  guard !writes.isEmpty else { return seconds }
  let clock = ContinuousClock()
  var index = 0
  while clock.now < deadline {
    let start = clock.now
    try commit(writes[index])
    seconds.append(Measure.seconds(clock.now - start))
    index = (index + 1) % writes.count
  }
  return seconds
}

/// A reader's side for systems whose calls are synchronous: `get` and `page` as the plan says,
/// from its start again when it runs out, until `deadline`.
func readLoop(
  _ plan: ReadPlan, until deadline: ContinuousClock.Instant, get: (Int64) throws -> ChatMessage?,
  page: (Int64) throws -> [ChatMessage]
) rethrows -> ReaderTally {
  var tally = ReaderTally()
  while !(tally.checksClock && ContinuousClock.now >= deadline) {
    let position = tally.calls % plan.ids.count
    if ReadPlan.isPage(tally.calls) {
      tally.count(page: try page(plan.threads[position]))
    } else {
      tally.count(message: try get(plan.ids[position]))
    }
  }
  return tally
}

/// One side of a run: a reader (its plan's index) or the writer.
enum Side: Sendable {
  case reader(Int)
  case writer
}

/// Runs `readers` readers and the writer, each on a thread of its own, for the raw C systems:
/// `body` gives a reader's tally or the writer's commit times.
func onSideThreads(
  readers: Int, _ body: @escaping @Sendable (Side) throws -> (reader: ReaderTally?, commits: [Double])
) async throws -> ReadWriteTally {
  let results = await onThreads(readers + 1) { index -> Swift.Result<(ReaderTally?, [Double]), BenchError> in
    do {
      let result = try body(index < readers ? .reader(index) : .writer)
      return .success((result.reader, result.commits))
    } catch let error as BenchError {
      return .failure(error)
    } catch {
      return .failure(BenchError("\(error)"))
    }
  }
  var tally = ReadWriteTally(readers: [], commits: [])
  for result in results {
    let (reader, commits) = try result.get()
    if let reader { tally.readers.append(reader) } else { tally.commits = commits }
  }
  return tally
}
