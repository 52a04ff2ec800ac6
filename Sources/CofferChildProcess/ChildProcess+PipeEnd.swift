import Coffer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension ChildProcess {
  /// This process's end of a pipe to a child's standard stream; closed when it is let go of.
  ///
  /// Reads and writes block the calling thread; each blocking read has an `async` form that
  /// blocks a thread of its own instead of one of the concurrency pool's. A ``close()`` waits
  /// for a read or write under way on another thread.
  package final class PipeEnd: Sendable {
    /// The descriptor, `-1` once closed (or when the stream is no pipe).
    private let descriptor: LockedState<Int32>

    /// Takes over `descriptor` (`-1` for an end that is closed from the start).
    init(_ descriptor: Int32) { self.descriptor = LockedState(descriptor) }

    deinit { close() }

    /// Reads what the child has written, up to `limit` bytes, waiting until there is at least
    /// one; empty at the end of the stream (the child closed it or exited) or once closed.
    ///
    /// - Throws: ``IOFailure`` when `read(2)` fails.
    package func read(upTo limit: Int = 65_536) throws -> [UInt8] {
      try descriptor.withLock { fd in
        guard fd >= 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: limit)
        let count = try bytes.withUnsafeMutableBytes { buffer in
          try Self.retrying("read") { posixRead(fd, buffer.baseAddress, buffer.count) }
        }
        bytes.removeSubrange(count...)
        return bytes
      }
    }

    /// Reads until the text read so far contains `marker`, or to the end of the stream, and
    /// returns everything it read (which may go on past the marker).
    ///
    /// - Throws: ``IOFailure`` when `read(2)` fails.
    package func read(until marker: String) throws -> [UInt8] {
      var bytes: [UInt8] = []
      while !String(decoding: bytes, as: UTF8.self).contains(marker) {
        let chunk = try read()
        if chunk.isEmpty { break }
        bytes += chunk
      }
      return bytes
    }

    /// ``read(until:)`` on a thread of its own rather than the concurrency pool's.
    package func read(until marker: String) async throws -> [UInt8] {
      try await ChildProcess.offThePool { Result { try self.read(until: marker) } }.get()
    }

    /// Reads to the end of the stream and returns everything it read.
    ///
    /// - Throws: ``IOFailure`` when `read(2)` fails.
    package func readToEnd() throws -> [UInt8] {
      var bytes: [UInt8] = []
      while case let chunk = try read(), !chunk.isEmpty { bytes += chunk }
      return bytes
    }

    /// ``readToEnd()`` on a thread of its own rather than the concurrency pool's.
    package func readToEnd() async throws -> [UInt8] {
      try await ChildProcess.offThePool { Result { try self.readToEnd() } }.get()
    }

    /// Writes all of `bytes` to the child, waiting while the pipe is full. A child that has
    /// closed its end makes this throw `EPIPE`, never raise `SIGPIPE` in this process.
    ///
    /// - Throws: ``IOFailure`` when `write(2)` fails or this end is closed.
    package func write(_ bytes: [UInt8]) throws {
      try descriptor.withLock { fd in
        guard fd >= 0 else { throw IOFailure(operation: "write", code: EBADF) }
        var written = 0
        while written < bytes.count {
          written += try bytes[written...].withUnsafeBytes { buffer in
            try Self.retrying("write") { writeWithoutSIGPIPE(fd, buffer) }
          }
        }
      }
    }

    /// Closes this end: the child reads the end of its input, or gets `EPIPE` when it writes.
    /// Closing twice does nothing.
    package func close() {
      descriptor.withLock { fd in
        if fd >= 0 { _ = posixClose(fd) }
        fd = -1
      }
    }

    /// The descriptor, for ``ChildProcess/run(_:_:environment:currentDirectory:input:standardErrorIntoOutput:)``,
    /// which alone uses the ends of the child it started.
    var rawDescriptor: Int32 { descriptor.withLock { $0 } }

    /// Calls `body` again while it fails with `EINTR`; throws for any other failure.
    static func retrying(_ operation: String, _ body: () -> Int) throws -> Int {
      while true {
        let result = body()
        if result >= 0 { return result }
        if errno != EINTR { throw IOFailure(operation: operation, code: errno) }
      }
    }

    /// Makes a pipe whose ends are close-on-exec (atomically where the C library can) and, on
    /// Darwin, raise no `SIGPIPE`. Returns 0, or -1 with `errno` set.
    static func makeCloseOnExecPipe(_ fds: inout [Int32]) -> Int32 {
      #if canImport(Darwin)
        guard pipe(&fds) == 0 else { return -1 }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(fds[1], F_SETNOSIGPIPE, 1)
        return 0
      #else
        if let pipe2 = GNU.pipe2 { return pipe2(&fds, O_CLOEXEC) }
        guard pipe(&fds) == 0 else { return -1 }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return 0
      #endif
    }
  }

  /// A `read(2)` or `write(2)` on a pipe to a child that failed.
  package struct IOFailure: Error, CustomStringConvertible {
    /// `"read"` or `"write"`.
    package var operation: String
    /// The `errno` it failed with.
    package var code: Int32

    /// "OPERATION: what the code means".
    package var description: String { "\(operation): \(String(cString: strerror(code)))" }
  }
}

/// `write(2)` that fails with `EPIPE` instead of raising `SIGPIPE` when the reader is gone.
/// On Linux the signal is blocked on this thread for the call and a `SIGPIPE` it raised is taken
/// off the thread's pending set; on Darwin the pipe was made with `F_SETNOSIGPIPE`.
func writeWithoutSIGPIPE(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int {
  #if canImport(Darwin)
    return Darwin.write(fd, buffer.baseAddress, buffer.count)
  #else
    var pipeSignal = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    var pending = sigset_t()
    sigpending(&pending)
    let alreadyPending = sigismember(&pending, SIGPIPE) == 1
    let written = Glibc.write(fd, buffer.baseAddress, buffer.count)
    if written < 0, errno == EPIPE, !alreadyPending {
      var noWait = timespec()
      _ = sigtimedwait(&pipeSignal, nil, &noWait)
      errno = EPIPE
    }
    return written
  #endif
}

/// `read(2)`, under a name the ``ChildProcess/PipeEnd/read(upTo:)`` method does not hide.
private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
  read(fd, buffer, count)
}

/// `close(2)`, under a name the ``ChildProcess/PipeEnd/close()`` method does not hide.
private func posixClose(_ fd: Int32) -> Int32 { close(fd) }
