@_spi(Backend) import Coffer
import Foundation

/// The shared conformance suite: the rules every Coffer backend follows, as checks that run
/// against any ``ConformanceTarget``.
///
/// ```swift
/// let target = try await ConformanceTarget(url: "sqlite:", registry: registry, directory: scratch)
/// for result in await ConformanceSuite.run(on: target) where result.outcome != .passed {
///   print(result.check.id, result.outcome)
/// }
/// ```
///
/// A check that needs a capability the target does not declare is reported as
/// ``ConformanceOutcome/skipped(_:)``, never silently passed.
public enum ConformanceSuite {
  /// Every check, in a stable order (grouped by area), with unique ids.
  public static let checks: [ConformanceCheck] =
    crudChecks + batchChecks + filterChecks + stringFilterChecks + sortChecks + pagingChecks
    + valueChecks + identityChecks + errorChecks + schemaChecks + durabilityChecks
    + concurrencyChecks + multiProcessChecks + scaleChecks + readChecks + typedAccessorChecks
    + schemaRaceChecks
    + blockingChecks + secretChecks + loggingChecks + differentialChecks + transactionChecks
    + observationChecks + toolChecks + aggregateChecks + caseFoldingChecks + fieldCompareChecks
    + existsChecks + selectChecks + pageChecks + referenceChecks + eagerLimitChecks + migrationChecks
    + groupOrderChecks + indexRangeChecks + dynamicRecordChecks
    + codableRelationshipChecks
    + keySizeChecks + schemaProcessChecks + changeFeedChecks + changeObservationChecks + telemetryChecks
    + searchChecks
    + textIndexChecks

  /// Runs one check on a target in a scratch folder of its own, removed afterwards.
  public static func run(_ check: ConformanceCheck, on target: ConformanceTarget) async -> ConformanceResult {
    let clock = ContinuousClock()
    let start = clock.now
    let outcome = await outcome(of: check, on: target)
    return ConformanceResult(check: check, outcome: outcome, duration: clock.now - start)
  }

  /// Runs checks one after another on a target, in order.
  public static func run(
    on target: ConformanceTarget, checks: [ConformanceCheck] = checks
  ) async -> [ConformanceResult] {
    var results: [ConformanceResult] = []
    for check in checks { results.append(await run(check, on: target)) }
    return results
  }

  /// The checks as Markdown: an introduction, then one table per area listing each check's id,
  /// rule and required capabilities.
  public static func markdownList() -> String {
    var text = """
      # Conformance checks

      Every Coffer backend runs these \(checks.count) checks (`coffer conformance URL`, or \
      `ConformanceSuite.run(on:)` in its tests). A check whose required capabilities the backend \
      does not declare is reported as skipped. Each check runs twice: with the row codec \
      `@Storable` generates for the models, and with the one derived from their `Codable` conformance.

      """
    var areas: [String] = []
    for check in checks where !areas.contains(check.area) { areas.append(check.area) }
    for area in areas {
      text += "\n## \(area)\n\n| id | rule | requires |\n|---|---|---|\n"
      for check in checks where check.area == area {
        let requires = check.requires.isEmpty ? "—" : check.requires.names.joined(separator: ", ")
        text += "| `\(check.id)` | \(check.rule.replacingOccurrences(of: "|", with: "\\|")) | \(requires) |\n"
      }
    }
    return text
  }

  private static func outcome(of check: ConformanceCheck, on target: ConformanceTarget) async
    -> ConformanceOutcome
  {
    let missing = check.requires.subtracting(target.capabilities)
    if !missing.isEmpty {
      let names = missing.names
      let noun = names.count == 1 ? "capability" : "capabilities"
      return .skipped("needs \(noun) \(names.joined(separator: ", ")), which \(target.name) does not declare")
    }
    for choice in target.rowCodecs {
      let outcome = await RowCodecChoice.$current.withValue(choice) {
        await run(check, on: target, rows: choice)
      }
      guard outcome == .passed else { return outcome }
    }
    return .passed
  }

  /// Runs a check once, with the row codec `choice` in force; a failure says which codec it was.
  private static func run(
    _ check: ConformanceCheck, on target: ConformanceTarget, rows choice: RowCodecChoice
  )
    async -> ConformanceOutcome
  {
    let folder = (target.directory as NSString).appendingPathComponent(
      "\(check.id)-\(UUID().uuidString.prefix(8))")
    do {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    } catch {
      return .failed("Could not create the scratch folder \(folder): \(error)")
    }
    let context = CheckContext(target: target, checkID: check.id, directory: folder)
    let outcome: ConformanceOutcome
    do {
      try await check.body(context)
      outcome = .passed
    } catch let failure as CheckFailure {
      outcome = .failed(failure.description + Self.codecNote(choice, target))
    } catch let skip as CheckSkipped {
      outcome = .skipped(skip.reason)
    } catch {
      outcome = .failed("Unexpected error: \(error)" + Self.codecNote(choice, target))
    }
    await context.closeAll()
    try? FileManager.default.removeItem(atPath: folder)
    return outcome
  }

  /// Names the row codec in a failure when the target runs checks with more than one.
  private static func codecNote(_ choice: RowCodecChoice, _ target: ConformanceTarget) -> String {
    guard target.rowCodecs.count > 1 else { return "" }
    return choice == .generated
      ? " (models using the code @Storable generates)" : " (models using their Codable conformance)"
  }
}
