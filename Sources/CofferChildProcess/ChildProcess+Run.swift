#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension ChildProcess {
  /// What a child run to completion printed, and how it ended.
  package struct Captured: Sendable {
    /// How the child ended.
    package var termination: Termination
    /// Everything it wrote to standard output (and standard error, when that was sent there).
    package var standardOutput: [UInt8]
    /// Everything it wrote to standard error; empty when that went to standard output.
    package var standardError: [UInt8]

    /// ``standardOutput`` as UTF-8 text (invalid bytes replaced).
    package var output: String { String(decoding: standardOutput, as: UTF8.self) }
    /// ``standardError`` as UTF-8 text (invalid bytes replaced).
    package var errors: String { String(decoding: standardError, as: UTF8.self) }
  }

  /// Runs `executable` to completion: writes `input` to its standard input (or gives it
  /// `/dev/null`), collects both of its output streams, and waits for it. Blocks the calling
  /// thread.
  ///
  /// Both streams and the input are served by one `poll(2)` loop, so a child that fills one
  /// pipe while this process is busy with another never deadlocks, whatever it prints.
  ///
  /// - Parameters:
  ///   - executable: A path, or a name looked up in `PATH` (see ``init(_:_:environment:currentDirectory:standardInput:standardOutput:standardError:)``).
  ///   - arguments: The arguments after the program's name.
  ///   - environment: The child's whole environment; `nil` passes on this process's.
  ///   - currentDirectory: The child's working directory; `nil` keeps this process's.
  ///   - input: What the child reads on standard input; `nil` gives it `/dev/null`. If the
  ///     child exits without reading all of it, the rest is dropped.
  ///   - standardErrorIntoOutput: Sends standard error into the same pipe as standard output,
  ///     interleaved as the child writes them.
  /// - Throws: ``LaunchFailure`` when the child cannot be started; ``IOFailure`` when reading
  ///   its output fails.
  package static func run(
    _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
    currentDirectory: String? = nil, input: [UInt8]? = nil, standardErrorIntoOutput: Bool = false
  ) throws -> Captured {
    let child = try ChildProcess(
      executable, arguments, environment: environment, currentDirectory: currentDirectory,
      standardInput: input == nil ? .nullDevice : .pipe, standardOutput: .pipe,
      standardError: standardErrorIntoOutput ? .standardOutput : .pipe)
    let streams: Streams
    do {
      streams = try child.exchange(input ?? [])
    } catch {
      child.kill()
      _ = child.waitUntilExit()
      throw error
    }
    return Captured(
      termination: child.waitUntilExit(), standardOutput: streams.output, standardError: streams.error)
  }

  /// ``run(_:_:environment:currentDirectory:input:standardErrorIntoOutput:)`` on a thread of its
  /// own, while the calling task is suspended: the wait for the child never holds one of the
  /// concurrency pool's threads, which a busy pool needs to run the tasks the child waits on.
  package static func run(
    _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
    currentDirectory: String? = nil, input: [UInt8]? = nil, standardErrorIntoOutput: Bool = false
  ) async throws -> Captured {
    try await offThePool {
      Result {
        try run(
          executable, arguments, environment: environment, currentDirectory: currentDirectory, input: input,
          standardErrorIntoOutput: standardErrorIntoOutput)
      }
    }.get()
  }

  private struct Streams {
    var output: [UInt8] = []
    var error: [UInt8] = []
  }

  /// Writes `input` and reads both output pipes until the child has closed them.
  private func exchange(_ input: [UInt8]) throws -> Streams {
    var streams = Streams()
    var written = 0
    if input.isEmpty { standardInput.close() }
    let inputFD = standardInput.rawDescriptor
    if inputFD >= 0 { _ = fcntl(inputFD, F_SETFL, fcntl(inputFD, F_GETFL) | O_NONBLOCK) }
    while true {
      var watched: [pollfd] = []
      if standardInput.rawDescriptor >= 0 {
        watched.append(pollfd(fd: standardInput.rawDescriptor, events: Int16(POLLOUT), revents: 0))
      }
      for end in [standardOutput, standardError] where end.rawDescriptor >= 0 {
        watched.append(pollfd(fd: end.rawDescriptor, events: Int16(POLLIN), revents: 0))
      }
      if watched.isEmpty { return streams }
      _ = try PipeEnd.retrying("poll") { Int(poll(&watched, nfds_t(watched.count), -1)) }
      for entry in watched where entry.revents != 0 {
        if entry.fd == standardInput.rawDescriptor {
          written += writeSome(input[written...])
          if written == input.count { standardInput.close() }
        } else if entry.fd == standardOutput.rawDescriptor {
          try readSome(standardOutput, into: &streams.output)
        } else {
          try readSome(standardError, into: &streams.error)
        }
      }
    }
  }

  /// Writes what the pipe takes now; a child that stopped reading ends the input.
  private func writeSome(_ bytes: ArraySlice<UInt8>) -> Int {
    let result = bytes.withUnsafeBytes { writeWithoutSIGPIPE(standardInput.rawDescriptor, $0) }
    if result >= 0 { return result }
    if errno != EAGAIN && errno != EINTR { standardInput.close() }
    return 0
  }

  /// Appends what `end` has to `bytes`, closing `end` at the end of its stream.
  private func readSome(_ end: PipeEnd, into bytes: inout [UInt8]) throws {
    let chunk = try end.read()
    if chunk.isEmpty { end.close() } else { bytes += chunk }
  }
}
