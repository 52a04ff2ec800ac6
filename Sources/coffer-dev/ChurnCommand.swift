import ArgumentParser
import Coffer
import CofferStores
import Foundation

/// One row written by `coffer-dev churn`.
struct ChurnRecord: Storable {
  var id: Int64
  var note: String
  var payload: String
}

extension CofferDevCommand {
  /// `coffer-dev churn URL`: a stream of single-row commits, for crash and durability tests.
  ///
  /// Each commit inserts the next id and, once the store has accepted it, prints
  /// `committed ID` — so a test that kills the process knows which rows must survive.
  struct Churn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Apply a stream of single-row commits to a store (for crash and durability testing).")

    @Argument(help: ArgumentHelp("The store URL.", valueName: "URL"))
    var url: String

    @Option(help: "How many commits to make.")
    var commits = 1_000

    func run() async throws {
      let store: Store
      do {
        store = try await Store.open(url: url)
      } catch {
        throw Terminal.failure(error, while: "opening the store '\(Terminal.redacted(url))'")
      }
      var next =
        (try await store.query(ChurnRecord.self).sort([Sort("id", ascending: false)]).first()?.id ?? 0) + 1
      for _ in 0..<commits {
        try await store.insert(
          ChurnRecord(id: next, note: "commit \(next)", payload: String(repeating: "x", count: 100)))
        FileHandle.standardOutput.write(Data("committed \(next)\n".utf8))
        next += 1
      }
      try await store.close()
    }
  }
}
