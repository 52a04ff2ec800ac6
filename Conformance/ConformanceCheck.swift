@_spi(Backend) import Coffer

/// One rule every Coffer backend must follow, with the code that tests it.
///
/// Checks are written against the public ``Coffer/Store`` API only, so any backend — in this
/// package or outside it — can run them. Each check starts from empty scratch stores.
public struct ConformanceCheck: Sendable, Identifiable {
  /// A stable identifier such as `"crud.insert-then-get"`; the part before the first dot is
  /// the ``area``.
  public let id: String
  /// The group the check belongs to: `"crud"`, `"batch"`, `"filter"`, `"sort"`, …
  public let area: String
  /// The rule in one line, e.g. "A value inserted is returned unchanged by get(id)."
  public let rule: String
  /// What a backend must declare or adopt for the check to run; without it the check is
  /// skipped and reported as skipped.
  public let requires: CheckRequirements
  let body: @Sendable (CheckContext) async throws -> Void

  init(
    _ id: String, requires: CheckRequirements = [], _ rule: String,
    body: @escaping @Sendable (CheckContext) async throws -> Void
  ) {
    self.id = id
    self.area = String(id.prefix { $0 != "." })
    self.rule = rule
    self.requires = requires
    self.body = body
  }
}

extension ConformanceCheck: CustomStringConvertible {
  /// The check's id, so that test runners and logs name it readably.
  public var description: String { id }
}

/// How running one check on one target ended.
public enum ConformanceOutcome: Sendable, Equatable {
  /// The backend followed the rule.
  case passed
  /// The backend broke the rule; the message says what was expected and what came back.
  case failed(String)
  /// The check did not run; the message says which capability was missing.
  case skipped(String)
}

/// The outcome of one check on one target, and how long it took.
public struct ConformanceResult: Sendable {
  /// The check that ran.
  public let check: ConformanceCheck
  /// Whether it passed, failed or was skipped.
  public let outcome: ConformanceOutcome
  /// The time the check took, including making and removing its scratch stores.
  public let duration: Duration

  /// A result.
  public init(check: ConformanceCheck, outcome: ConformanceOutcome, duration: Duration) {
    self.check = check
    self.outcome = outcome
    self.duration = duration
  }
}
