import Coffer
import CofferChildProcess
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The row `coffer-dev churn` writes: one per commit, ids counting up from 1.
public struct ChurnRecord: Storable {
  /// The commit's number.
  public var id: Int64
  /// A short text the writer sets.
  public var note: String
  /// Filler, so each commit writes a realistic amount.
  public var payload: String
}

/// A `coffer-dev churn` process committing to a store, killed with SIGKILL in the middle.
public enum KilledWriter {
  /// The `coffer-dev` executable, built next to the test bundle (a test target that kills
  /// writers depends on the `coffer-dev` target, so that it is built).
  public static var cofferDev: URL { Bundle.main.bundleURL.appendingPathComponent("coffer-dev") }

  /// Starts `coffer-dev churn URL`, waits for its first commit, lets it run for a random few
  /// milliseconds up to `maximumDelay`, kills it, and returns the ids it reported committed.
  public static func run(_ url: String, maximumDelay: Int) async throws -> [Int64] {
    let writer = try ChildProcess(
      cofferDev.path, ["churn", url, "--commits", "100000"], standardOutput: .pipe, standardError: .nullDevice
    )
    var printed = try await writer.standardOutput.read(until: "committed")
    try await Task.sleep(for: .milliseconds(Int.random(in: 5...maximumDelay)))
    writer.kill(SIGKILL)
    _ = await writer.waitUntilExit()
    printed += try await writer.standardOutput.readToEnd()
    return String(decoding: printed, as: UTF8.self).split(separator: "\n")
      .compactMap { $0.hasPrefix("committed ") ? Int64($0.dropFirst(10)) : nil }
  }
}

extension KilledWriter {
  /// Kills a writer `rounds` times, reopening the store after each kill, and returns what went
  /// wrong: a round whose last reported commit is missing, or whose ids 1…highest have a gap.
  /// An empty result means no acknowledged commit was lost.
  public static func problems(
    _ url: String, rounds: Int, maximumDelay: Int, registry: BackendRegistry
  ) async throws -> [String] {
    var problems: [String] = []
    for round in 1...rounds {
      guard let lastCommitted = try await run(url, maximumDelay: maximumDelay).last else {
        problems.append("round \(round): the writer committed nothing before it was killed")
        continue
      }
      let store = try await Store.open(url: url, registry: registry)
      let count = try await store.query(ChurnRecord.self).count()
      let highest =
        try await store.query(ChurnRecord.self).sort([Sort("id", ascending: false)]).first()?.id ?? 0
      if try await store.get(ChurnRecord.self, id: lastCommitted) == nil {
        problems.append("round \(round): commit \(lastCommitted) was acknowledged and lost")
      }
      if Int64(count) != highest {
        problems.append("round \(round): ids 1...\(highest) should all be there, found \(count)")
      }
      try await store.close()
    }
    return problems
  }
}
