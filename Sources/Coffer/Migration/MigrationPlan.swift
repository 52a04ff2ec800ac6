/// An ordered list of named migration steps that take a store's data from one version of an
/// app's model to the next: what ``Store/migrate(_:)`` runs, and what the store records.
///
/// A plan only grows: a new version of the app appends steps and never edits, reorders or
/// removes one that shipped, because stores out there have recorded them by name and position.
///
/// ```swift
/// let plan = MigrationPlan([
///   .renameField("v2-rename-body", entity: "Message", from: "body", to: "text"),
///   .changeKind("v2-score-as-double", entity: "Message", field: "score", to: .double, using: .intToDouble),
///   .addField("v2-word-count", entity: "Message", Field("words", .int)) { message in
///     .int(Int64(message["text"]?.stringValue?.split(separator: " ").count ?? 0))
///   },
/// ])
/// let store = try await Store.open(url: url, registry: .builtIn, migrating: plan)
/// ```
public struct MigrationPlan: Sendable {
  /// The steps, in the order they run.
  public var steps: [MigrationStep]

  /// A plan of these steps, run in this order.
  public init(_ steps: [MigrationStep]) { self.steps = steps }

  /// Checks that every step has a name and no two share one.
  ///
  /// - Throws: ``CofferError/Code/invalidConfiguration`` naming the step.
  func validate(store: String?) throws {
    var seen: Set<String> = []
    for (position, step) in steps.enumerated() {
      guard !step.name.isEmpty else {
        throw CofferError(
          .invalidConfiguration, "Migration step \(position) has no name; give every step a unique name.",
          store: store)
      }
      guard seen.insert(step.name).inserted else {
        throw CofferError(
          .invalidConfiguration,
          "Two migration steps are named '\(step.name)'; a store records steps by name, so rename one.",
          store: store)
      }
    }
  }
}

/// One named step of a ``MigrationPlan``: a change to a store's entities and their rows that
/// is applied all together, or not at all.
///
/// Use the built-in steps (``renameEntity(_:from:to:)``, ``renameField(_:entity:from:to:)``,
/// ``changeKind(_:entity:field:to:isOptional:using:)``, ``addField(_:entity:_:compute:)``,
/// ``removeField(_:entity:field:)``, ``removeEntity(_:entity:)``, ``addIndex(_:entity:_:)``,
/// ``dropIndex(_:entity:fields:)``) or write one with ``custom(_:summary:_:)`` over
/// ``DynamicRecord``s. A step's body may run more than once before it commits (a backend
/// retries a transaction it had to abort), so it must not have effects outside its
/// ``MigrationContext``.
public struct MigrationStep: Sendable {
  /// The step's name: unique within its plan, and never changed once the step shipped.
  public let name: String
  /// What the step does, for reports (`rename field 'body' of 'Message' to 'text'`).
  public let summary: String
  /// The step's work, on the store's entities inside one write transaction.
  let body: @Sendable (MigrationContext) throws -> Void

  /// A step that runs `body`. Prefer the built-in steps, and ``custom(_:summary:_:)``.
  init(name: String, summary: String, body: @escaping @Sendable (MigrationContext) throws -> Void) {
    self.name = name
    self.summary = summary
    self.body = body
  }

  /// Runs this step's work in a context: to make one step of several, or a step that runs
  /// another only when the store needs it.
  ///
  /// ```swift
  /// .custom("v2-rename-if-old") { context in
  ///   if try context.schema(of: "Message").position(of: "body") != nil {
  ///     try MigrationStep.renameField("v2-rename-if-old", entity: "Message", from: "body", to: "text")
  ///       .run(context)
  ///   }
  /// }
  /// ```
  public func run(_ context: MigrationContext) throws { try body(context) }

  /// A step of your own over the store's entities: read, rewrite, create and drop them through
  /// the ``MigrationContext`` — split a field in two, merge entities, move data between them.
  ///
  /// ```swift
  /// .custom("v2-split-name", summary: "split Person.name into first and last") { context in
  ///   let old = try context.schema(of: "Person")
  ///   let new = try EntitySchema(
  ///     name: "Person", fields: [Field("id", .int), Field("first", .string), Field("last", .string)],
  ///     idField: "id")
  ///   try context.rewrite("Person", as: new) { person in
  ///     let parts = (person["name"]?.stringValue ?? "").split(separator: " ", maxSplits: 1)
  ///     return try DynamicRecord(
  ///       DynamicEntity(schema: new),
  ///       attributes: ["id": person["id"] ?? .null, "first": .string(String(parts.first ?? "")),
  ///                    "last": .string(parts.count > 1 ? String(parts[1]) : "")])
  ///   }
  /// }
  /// ```
  public static func custom(
    _ name: String, summary: String? = nil, _ body: @escaping @Sendable (MigrationContext) throws -> Void
  ) -> MigrationStep {
    MigrationStep(name: name, summary: summary ?? "custom step", body: body)
  }
}
