import ArgumentParser
@_spi(Backend) import Coffer
import CofferTools
import Foundation

extension CofferCommand {
  /// `coffer copy SOURCE TARGET`: every entity of one store into another, verified.
  struct Copy: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract:
        "Copy every entity of one store into another (any backend to any backend) and verify the copy.",
      discussion: """
        The target must hold no rows, unless --resume continues a copy that was interrupted. The source is \
        only read. Rows go over in atomic batches; at the end both stores' digests are compared, and the \
        command exits non-zero unless they match. On a terminal a progress bar shows rows, rows per second \
        and the time left; otherwise a line is printed per entity and every few seconds.
        """)

    @Argument(help: ArgumentHelp("The store to copy from.", valueName: "SOURCE"))
    var source: String

    @Argument(
      help: ArgumentHelp("The store to copy into; created when it does not exist.", valueName: "TARGET"))
    var target: String

    @Flag(name: .long, help: "Continue a copy that was interrupted, after the rows it already copied.")
    var resume = false

    @Option(
      name: .long,
      help: ArgumentHelp("Most rows per batch (a batch also holds at most about 16 MiB).", valueName: "N"))
    var batchSize = 50_000

    @Option(name: .long, help: ArgumentHelp("Copy only this entity (repeat for several).", valueName: "NAME"))
    var entity: [String] = []

    func validate() throws {
      guard batchSize > 0 else { throw ValidationError("--batch-size must be at least 1.") }
    }

    @OptionGroup var observing: ObservingOptions

    func run() async throws {
      let from = try await StoreArgument.openExisting(source, role: "source", logger: observing.logger)
      let into = try await StoreArgument.open(target, role: "target", logger: observing.logger)
      var copier = StoreCopier(from: from, to: into)
      copier.batchSize = batchSize
      copier.resume = resume
      copier.entities = entity.isEmpty ? nil : entity
      let progress = CopyProgressDisplay(
        observing.progressOnTerminal ? .bar : observing.progress == .json ? .json : .quiet)
      let report: CopyReport
      do {
        report = try await copier.run { progress.show($0) }
        progress.finish()
        try await from.close()
        try await into.close()
      } catch {
        progress.finish()
        throw Terminal.failure(error, while: "copying '\(from.backend.name)' to '\(into.backend.name)'")
      }
      for copied in report.entities {
        Terminal.say(
          "\(copied.entity): \(copied.rowsCopied) row\(copied.rowsCopied == 1 ? "" : "s") copied"
            + (copied.rowsAlreadyThere > 0 ? ", \(copied.rowsAlreadyThere) already there" : ""))
      }
      let seconds =
        report.duration.seconds
      let rate = seconds > 0 ? Int(Double(report.rowsCopied) / seconds) : report.rowsCopied
      Terminal.say(
        "Copied \(report.rowsCopied) row\(report.rowsCopied == 1 ? "" : "s") in "
          + String(format: "%.1f", seconds) + " s (\(rate) rows/s).")
      if report.isVerified, let digest = report.targetDigest {
        Terminal.say(
          "Verified: \(digest.entities.count) entit\(digest.entities.count == 1 ? "y" : "ies"), \(digest.count) "
            + "row\(digest.count == 1 ? "" : "s"); every digest matches the source's.")
      } else {
        for difference in report.differences { Terminal.complain("coffer: the copy differs: \(difference)") }
        Terminal.complain("coffer: the copy is NOT verified: the digests differ.")
        throw ExitCode.failure
      }
    }
  }
}

/// The progress of a copy on standard error: a bar redrawn in place on a terminal, a JSON object
/// per entity and every second with `--progress json`, nothing otherwise.
final class CopyProgressDisplay: Sendable {
  /// How progress is shown.
  enum Mode { case bar, json, quiet }
  private let mode: Mode
  private var onTerminal: Bool { mode == .bar }
  private struct State {
    var lastShown: ContinuousClock.Instant?
    var entity = ""
    var drewBar = false
  }
  private let state = LockedState(State())

  init(_ mode: Mode) { self.mode = mode }

  func show(_ progress: CopyProgress) {
    if mode == .quiet { return }
    let now = ContinuousClock.now
    let line: String? = state.withLock { state in
      let newEntity = progress.entity != state.entity
      let interval: Duration = onTerminal ? .milliseconds(100) : .seconds(1)
      let finished = progress.rowsCopied == progress.totalRows
      guard newEntity || finished || state.lastShown.map({ now - $0 >= interval }) ?? true else { return nil }
      state.entity = progress.entity
      state.lastShown = now
      if onTerminal { state.drewBar = true }
      return onTerminal ? Self.describe(progress, bar: true) : ProgressLine.json(progress)
    }
    guard let line else { return }
    if onTerminal {
      FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
    } else {
      Terminal.complain(line)
    }
  }

  /// Ends the bar's line on a terminal.
  func finish() {
    if state.withLock({ $0.drewBar }) { FileHandle.standardError.write(Data("\n".utf8)) }
  }

  /// `[#######-------]  52% 520000/1000000 rows  61234 rows/s  ETA 8 s  Message`.
  static func describe(_ progress: CopyProgress, bar: Bool) -> String {
    let seconds =
      progress.elapsed.seconds
    let fraction = progress.totalRows == 0 ? 1 : Double(progress.rowsCopied) / Double(progress.totalRows)
    let rate = seconds > 0 ? Double(progress.rowsCopied) / seconds : 0
    let left = rate > 0 ? Double(progress.totalRows - progress.rowsCopied) / rate : nil
    var text = ""
    if bar {
      let width = 24
      let filled = min(width, Int(fraction * Double(width)))
      text +=
        "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
    }
    text += String(format: "%3.0f%%", fraction * 100)
    text += " \(progress.rowsCopied)/\(progress.totalRows) rows  \(Int(rate)) rows/s"
    text += "  ETA " + (left.map { String(format: "%.0f s", $0) } ?? "-")
    text += "  \(progress.entity)"
    return text
  }
}

extension Duration {
  /// The duration in seconds, for rates and messages.
  fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
