import ArgumentParser
import Coffer
import CofferTools
import Foundation

extension CofferCommand {
  /// `coffer changes URL [--after POSITION] [--follow]`: the store's change feed as JSON Lines.
  struct Changes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Print a store's change feed as JSON Lines, one committed batch a line.",
      discussion: """
        Each line holds the batch's position, its commit time and every row it changed: entity, id, kind \
        (insert, update, delete) and the values the row holds afterwards. The store must record a feed: open \
        it once with ?changes=on in its URL. Give --after with the position of the last line you read to go \
        on from there; with --follow the command waits for new batches until it is interrupted.
        """)

    @Argument(help: ArgumentHelp("The store whose feed to print.", valueName: "URL"))
    var url: String

    @Option(help: ArgumentHelp("Print only the batches after this position (c1.N).", valueName: "POSITION"))
    var after: String?

    @Flag(help: "Keep waiting for new batches instead of stopping at the last one.")
    var follow = false

    @OptionGroup var logging: LoggingOptions

    func run() async throws {
      var position: ChangePosition?
      if let after {
        guard let parsed = ChangePosition(after) else {
          throw ValidationError("'\(after)' is not a change position; positions look like c1.42.")
        }
        position = parsed
      }
      let store = try await StoreArgument.openExisting(url, role: "store", logger: logging.logger)
      do {
        for try await batch in store.changes(after: position, follow: follow) {
          FileHandle.standardOutput.write(Data((batch.jsonLine + "\n").utf8))
        }
        try await store.close()
      } catch {
        try? await store.close()
        throw Terminal.failure(error, while: "reading the change feed of '\(StoreArgument.redacted(url))'")
      }
    }
  }
}
