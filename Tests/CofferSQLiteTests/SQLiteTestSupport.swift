import Coffer
import CofferChildProcess
import CofferSQLite
import CofferTestSupport
import Foundation

/// A registry with only the SQLite backend.
func sqliteRegistry() -> BackendRegistry {
  var registry = BackendRegistry()
  registry.registerSQLite()
  return registry
}

/// A chat message with a field of every scalar kind and a nested document.
struct Message: Storable, Equatable {
  var id: Int64
  var threadID: Int64
  var sender: String
  var text: String
  var date: Date
  var read: Bool?
  var score: Double
  var attachment: Data
  var token: UUID
  var tags: [String]

  static var indexes: [Index] { [.on("threadID", "date"), .unique("token")] }
}

func sampleMessage(_ id: Int64) -> Message {
  Message(
    id: id, threadID: id % 3, sender: "user\(id)", text: "message \(id) 'quoted' %_*",
    date: Date(timeIntervalSince1970: 1_700_000_000 + Double(id) / 1e6), read: id % 2 == 0 ? true : nil,
    score: Double(id) / 4, attachment: Data([UInt8(id % 256), 0]),
    token: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012lld", id)) ?? UUID(), tags: ["t\(id)"]
  )
}

/// What a command printed, and its exit status.
struct ToolRun {
  var output: String
  var errors: String
  var status: Int32
}

/// Runs a command-line tool to completion.
func runTool(_ tool: String, _ arguments: [String]) throws -> ToolRun {
  let run = try ChildProcess.run(tool, arguments)
  return ToolRun(output: run.output, errors: run.errors, status: run.termination.status)
}

/// Whether the `sqlite3` tool (installed by `make deps`) is on the path.
var hasSQLiteTool: Bool { (try? runTool("sqlite3", ["-version"]).status) == 0 }
