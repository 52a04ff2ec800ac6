import CofferTestSupport
import Foundation
import Testing

/// `--progress json`, `--log-level` and `--log-format json`, which every data command takes.
@Suite struct ObservingOptionsTests {
  @Test func copyWritesProgressAsJSONLinesWhenAsked() async throws {
    let folder = try TemporaryFolder("coffer-progress")
    let source = "sqlite://" + folder.file("source.sqlite")
    let target = "sqlite://" + folder.file("target.sqlite")
    let filled = try await CommandRun.coffer(["demo", "--store", source])
    #expect(filled.status == 0, "stderr: \(filled.errorOutput)")
    let run = try await CommandRun.coffer(["copy", source, target, "--progress", "json"])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    let objects = run.errorOutput.split(separator: "\n").compactMap { line in
      (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }
    #expect(!objects.isEmpty, "no progress line in: \(run.errorOutput)")
    for object in objects {
      #expect(object["command"] as? String == "copy")
      #expect(object["rowsDone"] is Int && object["rows"] is Int && object["entity"] is String)
    }
    let last = try #require(objects.last)
    #expect(last["rowsDone"] as? Int == last["rows"] as? Int, "the last line is the finished copy")
  }

  @Test func logsAsJSONAtTheLevelAskedAndNotOtherwise() async throws {
    let folder = try TemporaryFolder("coffer-log")
    let store = "sqlite://" + folder.file("store.sqlite")
    let filled = try await CommandRun.coffer(["demo", "--store", store])
    #expect(filled.status == 0, "stderr: \(filled.errorOutput)")
    let quiet = try await CommandRun.coffer(["inspect", store])
    #expect(quiet.status == 0)
    #expect(!quiet.errorOutput.contains("Opened the store"))
    let run = try await CommandRun.coffer(["inspect", store, "--log-level", "debug", "--log-format", "json"])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    let objects = run.errorOutput.split(separator: "\n").compactMap { line in
      (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
    }
    #expect(
      objects.contains { $0["message"] as? String == "Opened the store" && $0["level"] as? String == "info" })
    #expect(objects.contains { $0["level"] as? String == "debug" })
    #expect(!objects.contains { $0["level"] as? String == "trace" }, "trace is below the level asked")
    for object in objects {
      let metadata = object["metadata"] as? [String: String]
      #expect(metadata?["coffer.store"] != nil, "a line without the store's name: \(object)")
    }
  }
}
