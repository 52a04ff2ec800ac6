import Coffer
import Dispatch
import Foundation
import Testing

/// The readers–writer lock the memory store keeps its tables behind: readers share it, a writer
/// holds it alone, and a waiting writer goes before readers that come after it.
@Suite struct SharedLockedStateTests {
  /// What happened, in order, across threads.
  final class Events: @unchecked Sendable {
    // `@unchecked Sendable`: `list` is touched only under `lock`.
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ event: String) { lock.withLock { list.append(event) } }
    var all: [String] { lock.withLock { list } }
  }

  /// Runs `body` on a thread of its own, not one of the concurrency pool's.
  func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    Thread {
      body()
      done.signal()
    }.start()
    return done
  }

  /// Starts a reader that takes the shared lock and holds it until `release` is signalled,
  /// calling `leaving` with the state just before it lets go; returns once the reader is inside,
  /// with the semaphore its thread signals when done.
  func readerHolding<State>(
    _ state: SharedLockedState<State>, until release: DispatchSemaphore,
    leaving: @escaping @Sendable (borrowing State) -> Void = { _ in }
  ) -> DispatchSemaphore {
    let inside = DispatchSemaphore(value: 0)
    let done = onThread {
      state.withSharedLock { value in
        inside.signal()
        release.wait()
        leaving(value)
      }
    }
    inside.wait()
    return done
  }

  @Test func twoReadersAreInsideAtOnce() {
    let state = SharedLockedState(0)
    let firstInside = DispatchSemaphore(value: 0)
    let secondInside = DispatchSemaphore(value: 0)
    let sawSecond = Events()
    let first = onThread {
      state.withSharedLock { _ in
        firstInside.signal()
        // With a lock one thread holds at a time, the second reader could not come in now.
        if secondInside.wait(timeout: .now() + 10) == .success { sawSecond.add("second inside") }
      }
    }
    firstInside.wait()
    let second = onThread { state.withSharedLock { _ in _ = secondInside.signal() } }
    first.wait()
    second.wait()
    #expect(sawSecond.all == ["second inside"])
  }

  @Test func aWriterWaitsForTheReaderAndThenChangesTheState() {
    let state = SharedLockedState([Int]())
    let release = DispatchSemaphore(value: 0)
    let events = Events()
    let reader = readerHolding(state, until: release) { value in
      events.add("reader leaves seeing \(value.count) values")
    }
    let writer = onThread {
      state.withLock { value in
        value.append(1)
        events.add("writer appended")
      }
    }
    Thread.sleep(forTimeInterval: 0.2)
    release.signal()
    reader.wait()
    writer.wait()
    #expect(events.all == ["reader leaves seeing 0 values", "writer appended"])
    #expect(state.withSharedLock { $0 } == [1])
  }

  #if os(Linux)
    @Test func aWaitingWriterGoesBeforeALaterReader() {
      let state = SharedLockedState(0)
      let release = DispatchSemaphore(value: 0)
      let writerStarting = DispatchSemaphore(value: 0)
      let events = Events()
      let first = readerHolding(state, until: release)
      let writer = onThread {
        writerStarting.signal()
        state.withLock { value in
          value += 1
          events.add("writer")
        }
      }
      writerStarting.wait()
      // Time for the writer to reach the lock and wait there.
      Thread.sleep(forTimeInterval: 0.2)
      let later = onThread { state.withSharedLock { value in events.add("later reader saw \(value)") } }
      // Time for the later reader to come in now if readers went first.
      Thread.sleep(forTimeInterval: 0.2)
      release.signal()
      first.wait()
      writer.wait()
      later.wait()
      #expect(events.all == ["writer", "later reader saw 1"])
    }
  #endif
}
