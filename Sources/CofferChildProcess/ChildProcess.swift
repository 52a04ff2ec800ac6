import Coffer
import Dispatch

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A program started with `posix_spawn`: the tests' tools and killed writers, and the
/// conformance suite's second process.
///
/// Foundation's `Process.run()` is not used for these because on Linux it scans
/// `/proc/self/fd` and copies directory entries past the end of its buffer; with many children
/// started while other tests open and close files, that read can crash the whole process.
/// A child started here gets the standard streams asked for (a pipe, a file, `/dev/null`, or
/// this process's own) and no other descriptor of this process: the pipes are made
/// close-on-exec when they are created, and with glibc 2.34 or later the child closes every
/// descriptor from 3 up before it runs the program (on Darwin, `POSIX_SPAWN_CLOEXEC_DEFAULT`
/// does the same), so even files a C library opened without `O_CLOEXEC` stay here. Its
/// signal dispositions and mask are reset to the defaults.
///
/// Waiting has a blocking and an `async` form of each call: the `async` one blocks a thread of
/// its own instead of one of the Swift concurrency pool's. This module is harness, not product:
/// only the `coffer` tools, the conformance suite's multi-process checks and the tests import
/// it, and it is no library product (hence `package` access), so `import Coffer` never shows it.
package final class ChildProcess: Sendable {
  /// Where the child's standard input comes from.
  package enum Input: Sendable {
    /// `/dev/null`: the child reads end of file at once.
    case nullDevice
    /// A pipe this process writes with ``ChildProcess/standardInput``.
    case pipe
    /// This process's own standard input.
    case inherit
  }

  /// Where the child's standard output or standard error goes.
  package enum Output: Sendable {
    /// `/dev/null`.
    case nullDevice
    /// A pipe this process reads with ``ChildProcess/standardOutput`` or
    /// ``ChildProcess/standardError``.
    case pipe
    /// The file at this path, created or emptied first.
    case file(String)
    /// This process's own stream of the same kind.
    case inherit
    /// For standard error only: wherever standard output goes.
    case standardOutput
  }

  /// How a child ended.
  package enum Termination: Sendable, Equatable, CustomStringConvertible {
    /// It exited with this status. A status lost because something else in this process reaped
    /// the child (a `SIGCHLD` handler, `waitpid(-1, …)`) reads as `-1`.
    case exited(Int32)
    /// It was ended by this signal.
    case signaled(Int32)

    /// The exit status, or the signal's number, as Foundation's `Process.terminationStatus`
    /// gives them.
    package var status: Int32 {
      switch self {
      case .exited(let status), .signaled(let status): status
      }
    }

    /// "exit status N" or "signal N".
    package var description: String {
      switch self {
      case .exited(let status): "exit status \(status)"
      case .signaled(let signal): "signal \(signal)"
      }
    }

    /// Decodes a status `waitpid` reported for a child that ended.
    init(waitStatus: Int32) {
      let signal = waitStatus & 0x7f
      self = signal == 0 ? .exited((waitStatus >> 8) & 0xff) : .signaled(signal)
    }
  }

  /// Why a child could not be started.
  package struct LaunchFailure: Error, CustomStringConvertible {
    /// The program that was to run.
    package var executable: String
    /// What went wrong.
    package var reason: String

    /// "could not start EXECUTABLE: REASON".
    package var description: String { "could not start \(executable): \(reason)" }
  }

  /// The child's process id. It stays the child's until the child is reaped, which only
  /// ``waitUntilExit()`` and ``termination`` do; ``kill(_:)`` never signals it after that.
  package let id: pid_t
  /// This process's end of the child's standard input when it is ``Input/pipe``; otherwise an
  /// end that is already closed.
  package let standardInput: PipeEnd
  /// This process's end of the child's standard output when it is ``Output/pipe``; otherwise
  /// an end that is already closed.
  package let standardOutput: PipeEnd
  /// This process's end of the child's standard error when it is ``Output/pipe``; otherwise an
  /// end that is already closed.
  package let standardError: PipeEnd
  /// How the child ended, once it has been reaped. Reaping happens only under this lock, so
  /// ``kill(_:)``, which takes it too, can never signal a process id the system reused.
  private let reaped = LockedState<Termination?>(nil)

  /// Starts `executable` with `arguments`.
  ///
  /// - Parameters:
  ///   - executable: A path, or a name without a slash looked up in the `PATH` of the
  ///     child's environment, as `/usr/bin/env` does.
  ///   - arguments: The arguments after the program's name.
  ///   - environment: The child's whole environment; `nil` passes on this process's.
  ///   - currentDirectory: The child's working directory; `nil` keeps this process's.
  ///   - standardInput: Where the child reads from; `/dev/null` unless asked.
  ///   - standardOutput: Where the child's standard output goes.
  ///   - standardError: Where the child's standard error goes.
  /// - Throws: ``LaunchFailure`` when the program is not found or cannot be started, or a
  ///   file or pipe for its streams cannot be opened.
  package init(
    _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
    currentDirectory: String? = nil, standardInput: Input = .nullDevice, standardOutput: Output = .inherit,
    standardError: Output = .inherit
  ) throws {
    let spawned = try Spawn.start(
      executable, arguments, environment: environment, currentDirectory: currentDirectory,
      streams: (standardInput, standardOutput, standardError))
    id = spawned.id
    self.standardInput = PipeEnd(spawned.input)
    self.standardOutput = PipeEnd(spawned.output)
    self.standardError = PipeEnd(spawned.error)
  }

  /// How the child ended, or `nil` while it runs. Never blocks.
  package var termination: Termination? { reap(waiting: false) }

  /// Sends `signal` (by default `SIGKILL`) to the child, unless it has already been reaped.
  package func kill(_ signal: Int32 = SIGKILL) {
    reaped.withLock { termination in
      if termination == nil { _ = sendSignal(id, signal) }
    }
  }

  /// Blocks the calling thread until the child ends, and returns how it ended.
  package func waitUntilExit() -> Termination {
    while true {
      if let termination = reap(waiting: false) { return termination }
      // Wait for the end without reaping (WNOWAIT), so that the id stays the child's until
      // `reap` records the termination under the lock.
      var info = siginfo_t()
      if waitid(P_PID, id_t(id), &info, WEXITED | WNOWAIT) == -1, errno != EINTR {
        return reap(waiting: true) ?? .exited(-1)
      }
    }
  }

  /// Waits until the child ends, on a thread of its own rather than the concurrency pool's,
  /// and returns how it ended.
  package func waitUntilExit() async -> Termination {
    if let termination { return termination }
    return await Self.offThePool { self.waitUntilExit() }
  }

  /// Reaps the child if it has ended (with `waiting`, even if the end is not yet visible) and
  /// returns the recorded termination.
  private func reap(waiting: Bool) -> Termination? {
    reaped.withLock { termination in
      if let termination { return termination }
      var status: Int32 = 0
      var result: pid_t
      repeat {
        result = waitpid(id, &status, waiting ? 0 : WNOHANG)
      } while result == -1 && errno == EINTR
      if result == id {
        termination = Termination(waitStatus: status)
      } else if result == -1 {
        termination = .exited(-1)  // ECHILD: someone else reaped it.
      }
      return termination
    }
  }

  /// Runs `body` on a new thread (a private serial queue gets one of its own) while the
  /// calling task is suspended, and returns its result.
  static func offThePool<R: Sendable>(_ body: @escaping @Sendable () -> R) async -> R {
    await withCheckedContinuation { continuation in
      DispatchQueue(label: "coffer.child-process").async { continuation.resume(returning: body()) }
    }
  }
}

/// `kill(2)`, under a name the ``ChildProcess/kill(_:)`` method does not hide.
private func sendSignal(_ id: pid_t, _ signal: Int32) -> Int32 { kill(id, signal) }
