import Coffer
import CofferChildProcess
import CofferSoak
import Dispatch

/// An extra process of `coffer-dev soak`: this executable again, run as `coffer-dev soak URL --child N`,
/// whose lines the parent collects as they come.
final class SoakChild: Sendable {
  /// What the child has reported so far.
  struct Reports: Sendable {
    /// Its window lines, by window number.
    var windows: [Int: SoakChildLine] = [:]
    /// Its `end` line, once printed.
    var end: SoakChildLine?
    /// Lines that were not the protocol's (counted, never shown: they could hold anything).
    var unreadable = 0
  }

  /// The child's number, from 1.
  let number: Int
  /// The running process.
  let process: ChildProcess
  /// What it reported, filled by ``collect()``.
  let reports = LockedState(Reports())

  /// Starts `executable` with `arguments`, its standard output a pipe to this process and its
  /// standard error this process's.
  ///
  /// - Throws: ``CofferError/Code/unavailable`` when the process cannot be started.
  init(number: Int, executable: String, arguments: [String]) throws {
    self.number = number
    do {
      process = try ChildProcess(executable, arguments, standardOutput: .pipe, standardError: .inherit)
    } catch {
      throw CofferError(
        .unavailable, "Extra process \(number) of the soak could not be started: \(error).", underlying: error
      )
    }
  }

  /// Reads the child's lines until it closes its output, on a thread of its own (never one of
  /// the concurrency pool's), then waits for it to end and returns how it ended.
  func collect() async -> ChildProcess.Termination {
    await withCheckedContinuation { continuation in
      DispatchQueue(label: "coffer.soak.child-\(number)").async {
        self.readLines()
        continuation.resume(returning: self.process.waitUntilExit())
      }
    }
  }

  /// Ends the child at once (after a failure of the parent).
  func kill() { process.kill() }

  /// Blocks until the end of the child's output, recording each line.
  private func readLines() {
    var pending: [UInt8] = []
    while true {
      let chunk = (try? process.standardOutput.read()) ?? []
      if chunk.isEmpty { break }
      pending += chunk
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        record(String(decoding: pending[..<newline], as: UTF8.self))
        pending.removeSubrange(...newline)
      }
    }
    if !pending.isEmpty { record(String(decoding: pending, as: UTF8.self)) }
  }

  /// Files one line of output.
  private func record(_ text: String) {
    let line = SoakChildLine(parsing: text[...])
    reports.withLock { reports in
      switch line {
      case .some(let line):
        if let window = line.window { reports.windows[window] = line } else { reports.end = line }
      case .none: reports.unreadable += 1
      }
    }
  }
}
