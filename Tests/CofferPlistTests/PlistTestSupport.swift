import Coffer
import CofferChildProcess
import CofferPlist
import CofferTestSupport
import Foundation
import Testing

/// A message like the chat example's, with every kind the plist layout maps.
struct Post: Storable, Equatable {
  var id: Int64
  var thread: Int64
  var text: String
  var date: Date
  var read: Bool?
  var score: Double
  var blob: Data
  var token: UUID
  var tags: [String]
}

func plistRegistry() -> BackendRegistry {
  var registry = BackendRegistry()
  registry.registerPlist()
  return registry
}

func samplePost(_ id: Int64) -> Post {
  Post(
    id: id, thread: id % 3, text: "post \(id) <&> ü",
    date: Date(timeIntervalSince1970: 1_700_000_000 + Double(id) / 1e6),
    read: id % 2 == 0 ? true : nil, score: Double(id) / 4, blob: Data([UInt8(id % 256), 0]),
    token: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012lld", id))!, tags: ["t\(id)"])
}

/// Runs a Python 3 program and returns what it printed; fails the test if it exits non-zero.
func python(_ program: String, _ arguments: [String] = []) throws -> String {
  let run = try ChildProcess.run("python3", ["-c", program] + arguments)
  guard run.termination.status == 0 else {
    Issue.record("python3 failed: \(run.errors)")
    throw CancellationError()
  }
  return run.output
}
