import Coffer
import Foundation

/// The seed of the randomized differential check: `COFFER_CONFORMANCE_SEED` (decimal or 0x-hex)
/// when set, a fixed default otherwise.
func differentialSeed() -> UInt64 {
  let fallback: UInt64 = 0xC0FFEE
  guard
    let text = ProcessInfo.processInfo.environment["COFFER_CONFORMANCE_SEED"]?.trimmingCharacters(
      in: .whitespaces),
    !text.isEmpty
  else { return fallback }
  if text.lowercased().hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16) ?? fallback }
  return UInt64(text) ?? fallback
}

extension ConformanceSuite {
  static let differentialChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "differential.random-batches",
      "Random batches (some failing) and random queries give exactly the results and errors of the reference semantics."
    ) { context in
      let seed = differentialSeed()
      FileHandle.standardError.write(
        Data(
          "differential.random-batches on \(context.target.name): seed \(seed) (set COFFER_CONFORMANCE_SEED to change)\n"
            .utf8))
      let schemas = try DifferentialModel.schemas()
      var generator = DifferentialGenerator(
        seed: seed, schemas: schemas,
        crossEntity: context.target.capabilities.contains(.crossEntityTransactions))
      let steps = generator.steps(batches: 200, queries: 400)
      let runner = DifferentialRunner(context: context, schemas: schemas)
      guard let mismatch = try await runner.firstMismatch(steps) else { return }
      let shortest = try await runner.shrink(steps, failingAt: mismatch.index)
      let final = try await runner.firstMismatch(shortest) ?? (shortest.count - 1, mismatch.message)
      let byName = Dictionary(uniqueKeysWithValues: schemas.map { ($0.name, $0) })
      let listing = shortest.enumerated().map {
        "  \($0.offset + 1). " + DifferentialRendering.step($0.element, byName)
      }
      throw CheckFailure(
        """
        Backend and reference disagree at step \(final.index + 1) of this sequence (seed \(seed); replay with \
        COFFER_CONFORMANCE_SEED=\(seed)); shrunk from \(mismatch.index + 1) steps to \(shortest.count):
        \(listing.joined(separator: "\n"))
        At step \(final.index + 1): \(final.message)
        """)
    }
  ]
}
