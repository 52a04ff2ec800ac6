import Coffer
import Foundation

/// The progress of a long command on standard error: a bar redrawn in place on a terminal, a
/// JSON object (``ProgressLine``) per entity or step and every second with `--progress json`,
/// nothing otherwise. Made by ``ObservingOptions/progressDisplay()``.
final class ProgressDisplay: Sendable {
  /// How progress is shown.
  enum Mode { case bar, json, quiet }
  private let mode: Mode
  private var onTerminal: Bool { mode == .bar }
  private struct State {
    var lastShown: ContinuousClock.Instant?
    var entity: String?
    var drewBar = false
  }
  private let state = LockedState(State())
  /// When the command began, for the commands whose own progress does not say.
  let started = ContinuousClock.now

  init(_ mode: Mode) { self.mode = mode }

  /// Shows `progress` when it begins an entity or step, finishes the command, or the last line
  /// is old enough (a tenth of a second for a bar, a second for JSON).
  func show(_ progress: CommandProgress) {
    if mode == .quiet { return }
    let now = ContinuousClock.now
    let line: String? = state.withLock { state in
      let newEntity = progress.entity != state.entity
      let interval: Duration = onTerminal ? .milliseconds(100) : .seconds(1)
      guard newEntity || progress.isFinished || state.lastShown.map({ now - $0 >= interval }) ?? true else {
        return nil
      }
      state.entity = progress.entity
      state.lastShown = now
      if onTerminal { state.drewBar = true }
      return onTerminal ? Self.describe(progress) : ProgressLine.json(progress)
    }
    guard let line else { return }
    if onTerminal {
      FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
    } else {
      Terminal.complain(line)
    }
  }

  /// Ends the bar's line on a terminal; a bar drawn after it starts on a line of its own.
  func finish() {
    let drew = state.withLock { state in
      defer { state.drewBar = false }
      return state.drewBar
    }
    if drew { FileHandle.standardError.write(Data("\n".utf8)) }
  }

  /// `[#######-------]  52% 520000/1000000 rows  61234 rows/s  ETA 8 s  Message`; a migration
  /// counts steps, and a command that does not know its total shows the rows done.
  static func describe(_ progress: CommandProgress) -> String {
    let seconds = progress.elapsed.seconds
    let done: Double
    let total: Double?
    let unit: String
    if let steps = progress.steps, let stepsDone = progress.stepsDone {
      (done, total, unit) = (Double(stepsDone), Double(steps), "steps")
    } else if let rows = progress.rows {
      (done, total, unit) = (Double(progress.rowsDone), Double(rows), "rows")
    } else {
      (done, total, unit) = (Double(progress.rowsDone), nil, "rows")
    }
    let rate = seconds > 0 ? Double(progress.rowsDone) / seconds : 0
    var text = ""
    if let total {
      let fraction = total == 0 ? 1 : done / total
      let width = 24
      let filled = min(width, Int(fraction * Double(width)))
      text +=
        "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
      text += String(format: "%3.0f%%", fraction * 100) + " \(Int(done))/\(Int(total)) \(unit)"
    } else {
      text += "\(Int(done)) \(unit)"
    }
    if unit == "rows" {
      text += "  \(Int(rate)) rows/s"
      if let total {
        let left = rate > 0 ? (total - done) / rate : nil
        text += "  ETA " + (left.map { String(format: "%.0f s", $0) } ?? "-")
      }
    }
    if let entity = progress.entity { text += "  \(entity)" }
    return text
  }
}
