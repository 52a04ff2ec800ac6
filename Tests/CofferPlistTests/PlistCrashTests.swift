import Coffer
import CofferChildProcess
import CofferPlist
import CofferTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct PlistCrashTests {
  @Test(arguments: PlistBackend.Format.allCases)
  func aKilledWriterNeverLeavesAFileThatFailsToOpenNorLosesACommit(format: PlistBackend.Format) async throws {
    try #require(
      FileManager.default.isExecutableFile(atPath: KilledWriter.cofferDev.path),
      "build the coffer-dev executable first")
    let folder = try TemporaryFolder()
    let path = folder.file("churn.plist")
    var killsDuringWrites = 0
    for round in 1...12 {
      let committed = try await KilledWriter.run(
        "plist://\(path)?format=\(format.rawValue)", maximumDelay: 120)
      let lastCommitted = try #require(committed.last, "round \(round): the child committed nothing")
      if try FileManager.default.contentsOfDirectory(atPath: folder.path).contains(where: {
        $0.contains(".tmp-")
      }) {
        killsDuringWrites += 1
      }

      let store = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
      let count = try await store.query(ChurnRecord.self).count()
      let highest =
        try await store.query(ChurnRecord.self).sort([Sort("id", ascending: false)]).first()?.id ?? 0
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
      FileManager.default.isExecutableFile(atPath: KilledWriter.cofferDev.path),
      "build the coffer-dev executable first")
    let folder = try TemporaryFolder()
    let path = folder.file("shared.plist")
    let writer = try ChildProcess(
      KilledWriter.cofferDev.path, ["churn", "plist://\(path)", "--commits", "100000"], standardOutput: .pipe,
      standardError: .nullDevice)
    defer {
      writer.kill(SIGKILL)
      _ = writer.waitUntilExit()
    }
    _ = try await writer.standardOutput.read(until: "committed")
    #expect {
      _ = try PlistBackend(path: path)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .locked && error?.path == path
    }
  }
}
