import Coffer
import CofferChildProcess
import CofferLMDB
import CofferTestSupport
import Foundation
import Testing

/// A message of a chat, with a compound index for thread pages and a unique handle.
struct Note: Storable, Equatable {
  var id: Int64
  var thread: Int64
  var text: String
  var date: Date
  var read: Bool?
  var score: Double
  var blob: Data
  var token: UUID
  var handle: String?

  static var indexes: [Index] { [.on("thread", "date"), .unique("handle"), .on("score")] }
}

func lmdbRegistry() -> BackendRegistry {
  var registry = BackendRegistry()
  registry.registerLMDB()
  return registry
}

func openStore(_ path: String, options: String = "") async throws -> Store {
  try await Store.open(url: "lmdb://\(path)\(options)", registry: lmdbRegistry())
}

func sampleNote(_ id: Int64) -> Note {
  Note(
    id: id, thread: id % 3, text: "note \(id)", date: Date(timeIntervalSince1970: 1_700_000_000 + Double(id)),
    read: id % 2 == 0 ? true : nil, score: Double(id % 7) - 3, blob: Data([UInt8(id % 256), 0]),
    token: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012lld", id))!,
    handle: id % 4 == 0 ? nil : "h\(id)")
}

/// Runs a tool and returns its exit status and output; `nil` when it cannot be started.
func run(_ tool: String, _ arguments: [String]) -> (status: Int32, output: String)? {
  guard let run = try? ChildProcess.run(tool, arguments, standardErrorIntoOutput: true) else { return nil }
  return (run.termination.status, run.output)
}

/// liblmdb's `mdb_stat` tool, where it is installed.
let mdbStatTool = ["/usr/bin/mdb_stat", "/usr/local/bin/mdb_stat", "/opt/homebrew/bin/mdb_stat"]
  .first(where: FileManager.default.isExecutableFile(atPath:))
