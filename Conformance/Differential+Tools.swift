@_spi(Backend) import Coffer
import CofferTools
import Foundation

extension DifferentialRunner {
  /// What the data tools must do with whatever a random sequence left in a store: a copy into a
  /// new store of the same backend is verified, an export imports into another with the same
  /// digest, and ``Store/verify()`` finds nothing. Returns what went wrong, or nil.
  ///
  /// Random sequences leave stores no fixture would: entities and fields with arbitrary
  /// Unicode names, evolved schemas with defaults, every kind of value at its extremes.
  static func toolsDisagreement(_ lane: DifferentialLane) async -> String? {
    var scratch: [Store] = []
    let outcome: String?
    do {
      outcome = try await toolsOutcome(lane, scratch: &scratch)
    } catch {
      outcome = "tools: the data tools failed on the store: \(error)"
    }
    for store in scratch { try? await store.close() }
    return outcome
  }

  private static func toolsOutcome(_ lane: DifferentialLane, scratch: inout [Store]) async throws -> String? {
    do {
      let copy = try await lane.context.store()
      scratch.append(copy)
      let report = try await StoreCopier(from: lane.store, to: copy).run()
      guard report.isVerified else {
        return "tools: a copy of the store into a new one is not verified: \(report.differences)"
      }
      var text = ""
      let exported = try await lane.store.exportJSONLines { text += $0 }
      let imported = try await lane.context.store()
      scratch.append(imported)
      let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
      let read = try await imported.importJSONLines(AsyncLines(lines))
      guard read.digest == exported, try await imported.digest() == exported else {
        return "tools: an export imported into a new store gives another digest: "
          + exported.differences(from: read.digest).joined(separator: " ")
      }
      let verified = try await lane.store.verify()
      guard verified.isClean else {
        return "tools: verify() reports problems: "
          + verified.problems.prefix(5).map(\.description).joined(separator: "; ")
      }
      if lane.recordsChanges {
        let replica = try await lane.context.store()
        scratch.append(replica)
        try await replica.prepare(schemas: try await lane.store.storedSchemas())
        for try await batch in lane.store.changes() { try await replica.replay(batch) }
        let differences = try await replica.digest().differences(from: exported)
        guard differences.isEmpty else {
          return "tools: the change feed replayed into a new store gives another digest: "
            + differences.prefix(5).joined(separator: " ")
        }
      }
      return nil
    }
  }
}
