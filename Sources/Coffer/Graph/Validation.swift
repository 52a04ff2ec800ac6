/// A type that checks its own values before a ``ModelGraph`` accepts a change.
///
/// A change whose new value reports any problem is rejected: the graph keeps the old value,
/// emits ``GraphEvent/validationFailed(_:problems:)`` and throws a ``CofferError`` with code
/// ``CofferError/Code/invalidValue`` whose message lists every problem (read them one by one
/// with ``CofferError/validationProblems``).
///
/// ```swift
/// extension Note: Validatable {
///   func validate() -> [ValidationProblem] {
///     var problems: [ValidationProblem] = []
///     if title.count < 5 { problems.append(.init(field: "title", "must have at least 5 characters")) }
///     return problems
///   }
/// }
/// ```
///
/// Problems are shown to people and written to logs: describe the rule, not the value.
public protocol Validatable {
  /// Every problem with this value; empty when it is valid.
  func validate() -> [ValidationProblem]
}

/// One reason a value is not valid, optionally tied to a field.
public struct ValidationProblem: Sendable, Hashable, CustomStringConvertible {
  /// The field concerned, or `nil` for a rule about the whole value.
  public var field: String?
  /// What is wrong, as a rule a person can follow: "must not be empty".
  public var message: String

  /// A problem with a field, or with the whole value when `field` is `nil`.
  public init(field: String? = nil, _ message: String) {
    self.field = field
    self.message = message
  }

  /// `field: message`, or just the message.
  public var description: String { field.map { "\($0): \(message)" } ?? message }
}

/// The problems behind a rejected change; the ``CofferError/underlying`` error of a validation
/// failure.
public struct ValidationFailure: Error, Sendable, Hashable {
  /// The record whose new value was rejected.
  public var key: ModelKey
  /// Every problem its validation reported.
  public var problems: [ValidationProblem]

  /// A failure.
  public init(key: ModelKey, problems: [ValidationProblem]) {
    self.key = key
    self.problems = problems
  }

  /// The error a graph throws for this failure.
  var error: CofferError {
    let list = problems.map(\.description).joined(separator: "; ")
    return CofferError(
      .invalidValue,
      "The new value of \(key) failed validation (\(problems.count) "
        + "\(problems.count == 1 ? "problem" : "problems")): \(list). Nothing changed; fix the value and try again.",
      entity: key.entity, id: key.id, field: problems.compactMap(\.field).first, underlying: self)
  }
}

extension CofferError {
  /// The validation problems behind this error, when a graph rejected a change that failed
  /// validation; empty otherwise.
  public var validationProblems: [ValidationProblem] {
    (underlying as? ValidationFailure)?.problems ?? []
  }
}
