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
    let readerInside = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let events = Events()
    let reader = onThread {
      state.withSharedLock { value in
        readerInside.signal()
        release.wait()
        events.add("reader leaves seeing \(value.count) values")
      }
    }
    readerInside.wait()
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
      let readerInside = DispatchSemaphore(value: 0)
      let release = DispatchSemaphore(value: 0)
      let writerStarting = DispatchSemaphore(value: 0)
      let events = Events()
      let first = onThread {
        state.withSharedLock { _ in
          readerInside.signal()
          release.wait()
        }
      }
      readerInside.wait()
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
