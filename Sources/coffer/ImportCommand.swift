import ArgumentParser
@_spi(Backend) import Coffer
import CofferTools
import Foundation

extension CofferCommand {
  /// `coffer import URL < file.jsonl`: reads an export into a store.
  struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Read an export made by 'coffer export' into a store.",
      discussion: """
        The store is created when it does not exist; it must hold no rows of the entities imported. The \
        digests in the export's closing line are checked; when anything fails, the rows imported are removed \
        again and the command exits non-zero. Progress goes to standard error: a bar on a terminal, or JSON \
        lines with --progress json.
        """)

    @Argument(
      help: ArgumentHelp("The store to import into, e.g. sqlite:///var/app/db.sqlite.", valueName: "URL"))
    var url: String

    @Option(
      name: [.short, .long],
      help: ArgumentHelp("Read this file instead of standard input.", valueName: "FILE"))
    var input: String?

    @OptionGroup var observing: ObservingOptions

    func run() async throws {
      let handle: FileHandle
      if let input {
        guard let opened = FileHandle(forReadingAtPath: input) else {
          throw Terminal.failure(
            CofferError(.notFound, "The export file cannot be opened for reading.", path: input),
            while: "importing")
        }
        handle = opened
      } else {
        handle = .standardInput
      }
      let store = try await StoreArgument.open(url, role: "store", logger: observing.logger)
      let report: ImportReport
      let display = observing.progressDisplay()
      do {
        report = try await store.importJSONLines(FileLines(handle: handle)) {
          display.show(CommandProgress("import", $0))
        }
        display.finish()
        try await store.close()
      } catch {
        display.finish()
        try? await store.close()
        throw Terminal.failure(error, while: "importing into the store '\(store.backend.name)'")
      }
      Terminal.say(
        "Imported \(report.rows) row\(report.rows == 1 ? "" : "s") of \(report.digest.entities.count) "
          + "entit\(report.digest.entities.count == 1 ? "y" : "ies") into \(store.backend.name); "
          + "the digests match the export's.")
    }
  }
}
