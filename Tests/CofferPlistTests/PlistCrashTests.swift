import Coffer
import CofferPlist
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

@Suite struct PlistCrashTests {
  /// The `coffer` executable, built next to the test bundle.
  var coffer: URL { Bundle.main.bundleURL.appendingPathComponent("coffer") }

  @Test(arguments: PlistBackend.Format.allCases)
  func aKilledWriterNeverLeavesAFileThatFailsToOpenNorLosesACommit(format: PlistBackend.Format) async throws {
    try #require(
      FileManager.default.isExecutableFile(atPath: coffer.path), "build the coffer executable first")
    let folder = try TemporaryFolder()
    let path = folder.file("churn.plist")
    var random = SystemRandomNumberGenerator()
    var killsDuringWrites = 0
    for round in 1...12 {
      let process = Process()
      process.executableURL = coffer
      process.arguments = ["churn", "plist://\(path)?format=\(format.rawValue)", "--commits", "100000"]
      let output = Pipe()
      process.standardOutput = output
      process.standardError = FileHandle.nullDevice
      try process.run()
      // Wait for the first commit, then let it run a little before killing it.
      var printed = Data()
      while !String(decoding: printed, as: UTF8.self).contains("committed") {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        printed.append(chunk)
      }
      try await Task.sleep(for: .milliseconds(Int.random(in: 5...120, using: &random)))
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      printed.append(output.fileHandleForReading.readDataToEndOfFile())
      let committed = String(decoding: printed, as: UTF8.self).split(separator: "\n")
        .compactMap { $0.hasPrefix("committed ") ? Int64($0.dropFirst(10)) : nil }
      let lastCommitted = try #require(committed.last, "round \(round): the child committed nothing")
      if try FileManager.default.contentsOfDirectory(atPath: folder.path).contains(where: {
        $0.contains(".tmp-")
      }) {
        killsDuringWrites += 1
      }

      let store = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
      let count = try await store.count(ChurnRecord.self)
      let highest = try await store.query(ChurnRecord.self).sort(.descending("id")).first()?.id ?? 0
      #expect(
        try await store.get(ChurnRecord.self, id: lastCommitted) != nil,
        "round \(round): commit \(lastCommitted) was lost")
      #expect(
        Int64(count) == highest, "round \(round): ids 1...\(highest) should all be there, found \(count)")
      #expect(highest >= lastCommitted)
      try await store.close()
      let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
        $0.contains(".tmp-")
      }
      #expect(leftovers.isEmpty, "opening removes a killed writer's temporary file")
    }
    print("\(format.rawValue): \(killsDuringWrites) of 12 kills left a half-written temporary file behind")
  }

  @Test func anotherProcessCannotOpenTheStoreWhileOneHasItOpen() async throws {
    try #require(
      FileManager.default.isExecutableFile(atPath: coffer.path), "build the coffer executable first")
    let folder = try TemporaryFolder()
    let path = folder.file("shared.plist")
    let process = Process()
    process.executableURL = coffer
    process.arguments = ["churn", "plist://\(path)", "--commits", "100000"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    defer {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
    var printed = Data()
    while !String(decoding: printed, as: UTF8.self).contains("committed") {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      printed.append(chunk)
    }
    #expect {
      _ = try PlistBackend(path: path)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .locked && error?.path == path
    }
  }
}
