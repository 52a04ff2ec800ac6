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
        and the time left; with --progress json a JSON object is written per entity and every second.
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
      let progress = observing.progressDisplay()
      let report: CopyReport
      do {
        report = try await copier.run { progress.show(CommandProgress($0)) }
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
