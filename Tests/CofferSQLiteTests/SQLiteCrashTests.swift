import Coffer
import CofferSQLite
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The row `coffer churn` writes.
struct ChurnRecord: Storable {
  var id: Int64
  var note: String
  var payload: String
}

@Suite struct SQLiteCrashTests {
  /// The `coffer` executable, built next to the test bundle.
  var coffer: URL { Bundle.main.bundleURL.appendingPathComponent("coffer") }

  @Test func aKilledWriterLosesNoCommitThatApplyReturned() async throws {
    try #require(
      FileManager.default.isExecutableFile(atPath: coffer.path), "build the coffer executable first")
    let folder = try TemporaryFolder()
    let path = folder.file("churn.sqlite")
    var random = SystemRandomNumberGenerator()
    for round in 1...5 {
      let process = Process()
      process.executableURL = coffer
      process.arguments = ["churn", "sqlite://\(path)", "--commits", "100000"]
      let output = Pipe()
      process.standardOutput = output
      process.standardError = FileHandle.nullDevice
      try process.run()
      var printed = Data()
      while !String(decoding: printed, as: UTF8.self).contains("committed") {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        printed.append(chunk)
      }
      try await Task.sleep(for: .milliseconds(Int.random(in: 5...80, using: &random)))
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      printed.append(output.fileHandleForReading.readDataToEndOfFile())
      let committed = String(decoding: printed, as: UTF8.self).split(separator: "\n")
        .compactMap { $0.hasPrefix("committed ") ? Int64($0.dropFirst(10)) : nil }
      let lastCommitted = try #require(committed.last, "round \(round): the child committed nothing")

      let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
      let count = try await store.count(ChurnRecord.self)
      let highest = try await store.query(ChurnRecord.self).sort(.descending("id")).first()?.id ?? 0
      #expect(
        try await store.get(ChurnRecord.self, id: lastCommitted) != nil,
        "round \(round): commit \(lastCommitted) was lost")
      #expect(
        Int64(count) == highest, "round \(round): ids 1...\(highest) should all be there, found \(count)")
      try await store.close()
    }
  }
}
