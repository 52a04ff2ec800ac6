import NIOCore

/// A task executor that runs jobs on one SwiftNIO event loop.
///
/// A call that prefers it (`withTaskExecutorPreference`) runs on the thread of its connection's
/// event loop: the query is written, its response read, its promise completed and the awaiting
/// code resumed all on that one thread. Without it, every await of a query crosses from the
/// event loop to the Swift concurrency pool and back, waking another thread each time, which
/// costs more than a point read's whole round trip on a busy machine.
final class EventLoopExecutor: TaskExecutor {
  let eventLoop: any EventLoop

  init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
  }
}
