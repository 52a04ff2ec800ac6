import Foundation

/// What running (or rehearsing) a ``MigrationPlan`` did, step by step.
public struct MigrationReport: Sendable, Hashable, CustomStringConvertible {
  /// One step of the plan and what became of it.
  public struct Step: Sendable, Hashable {
    /// What became of a step.
    public enum Outcome: Sendable, Hashable {
      /// The store had run it before; it did not run again.
      case alreadyApplied
      /// It ran and its changes were committed (or, in a rehearsal, would have been).
      case applied
      /// It failed and applied nothing: the error's code and message.
      case failed(code: String, message: String)
      /// An earlier step failed, so it did not run.
      case notRun
    }
    /// The step's name.
    public var name: String
    /// What the step does.
    public var summary: String
    /// Its position in the plan, from 0.
    public var position: Int
    /// What became of it.
    public var outcome: Outcome
    /// How many rows it read, wrote or removed (0 for a step that did not run now).
    public var rowsTouched: Int
  }

  /// Every step of the plan, in order.
  public var steps: [Step]
  /// Whether the plan ran on a copy, leaving the store untouched.
  public var isRehearsal: Bool
  /// For a rehearsal, the digest of the data as the plan leaves it (after the last step that
  /// succeeded): after migrating the store itself, ``Store/digest(entities:)`` gives the same.
  public var digest: StoreDigest?

  /// How many steps ran now.
  public var appliedCount: Int { steps.count { $0.outcome == .applied } }
  /// Whether every step is applied (now or before).
  public var succeeded: Bool {
    steps.allSatisfy { $0.outcome == .applied || $0.outcome == .alreadyApplied }
  }

  /// One line per step: position, name, outcome and rows touched.
  public var description: String {
    steps.map { step in
      let outcome =
        switch step.outcome {
        case .alreadyApplied: "already applied"
        case .applied:
          isRehearsal ? "would apply, \(step.rowsTouched) rows" : "applied, \(step.rowsTouched) rows"
        case .failed(let code, let message): "failed (\(code)): \(message)"
        case .notRun: "not run"
        }
      return "\(step.position) \(step.name) — \(step.summary): \(outcome)"
    }.joined(separator: "\n")
  }
}

/// Runs a ``MigrationPlan`` one step per write transaction of a ``StorageBackend``'s
/// ``SchemaEditing/editSchema(_:)``, the same way on every backend.
///
/// Each transaction reads the store's record of steps, refuses a record the plan does not
/// start with (``CofferError/Code/unknownMigration``), runs the next step and records it —
/// so a step runs once however many processes open the store with the plan at once, and a
/// process killed between steps leaves the store after the last step recorded.
enum MigrationRunner {
  /// What one transaction did.
  private enum Turn: Sendable {
    /// Every step is recorded: the record as it stands.
    case finished([MigrationRecord])
    /// The step at this position ran, touching this many rows; the record before it.
    case ran(position: Int, rowsTouched: Int, before: [MigrationRecord])
  }

  /// Runs every step the store has not recorded, in order, and reports each one.
  ///
  /// - Throws: the first failing step's error (``CofferError/Code/migrationFailed`` for a step
  ///   that cannot go on); the store is left after the last step that succeeded.
  static func run(
    _ plan: MigrationPlan, on backend: any StorageBackend,
    progress: (@Sendable (MigrationProgress) -> Void)? = nil
  ) async throws -> MigrationReport {
    try plan.validate(store: backend.name)
    let editing = try backend.schemaEditing()
    var ran: [Int: Int] = [:]
    var firstRecord: [MigrationRecord]?
    while true {
      let turn = try await editing.editSchema { editor in
        try runNextStep(of: plan, with: editor, store: backend.name)
      }
      switch turn {
      case .finished(let record):
        return report(plan, alreadyApplied: (firstRecord ?? record).count, ran: ran, rehearsal: false)
      case .ran(let position, let rowsTouched, let before):
        if firstRecord == nil { firstRecord = before }
        ran[position] = rowsTouched
        progress?(
          MigrationProgress(
            step: plan.steps[position].name, stepsDone: position + 1, steps: plan.steps.count,
            rowsTouched: ran.values.reduce(0, +)))
        // The last step is recorded: the plan is done without another transaction to say so.
        if position == plan.steps.count - 1 {
          return report(plan, alreadyApplied: (firstRecord ?? before).count, ran: ran, rehearsal: false)
        }
      }
    }
  }

  /// Runs every step the tables have not recorded, in order, on the tables themselves;
  /// reports a failing step instead of throwing, leaving the tables after the last step that
  /// succeeded.
  static func rehearse(
    _ plan: MigrationPlan, on tables: inout InMemoryTables,
    progress: (@Sendable (MigrationProgress) -> Void)? = nil
  ) throws -> MigrationReport {
    try plan.validate(store: tables.storeName)
    let already = tables.migrations.count
    var ran: [Int: Int] = [:]
    while true {
      let turn: Turn
      do {
        let store = tables.storeName
        turn = try tables.edit { try runNextStep(of: plan, with: $0, store: store) }.result
      } catch let error as CofferError where error.code != .unknownMigration {
        var report = report(plan, alreadyApplied: already, ran: ran, rehearsal: true)
        let failed = tables.migrations.count
        report.steps[failed].outcome = .failed(code: error.code.name, message: error.message)
        for later in report.steps.indices where later > failed { report.steps[later].outcome = .notRun }
        return report
      }
      switch turn {
      case .finished: return report(plan, alreadyApplied: already, ran: ran, rehearsal: true)
      case .ran(let position, let rowsTouched, _):
        ran[position] = rowsTouched
        progress?(
          MigrationProgress(
            step: plan.steps[position].name, stepsDone: position + 1, steps: plan.steps.count,
            rowsTouched: ran.values.reduce(0, +)))
      }
    }
  }

  /// Inside one write transaction: checks the record against the plan, then runs and records
  /// the next step, if there is one.
  private static func runNextStep(
    of plan: MigrationPlan, with editor: any SchemaEditor, store: String?
  ) throws -> Turn {
    let record = try editor.migrations()
    try check(record, against: plan, store: store)
    guard record.count < plan.steps.count else { return .finished(record) }
    let position = record.count
    let step = plan.steps[position]
    let context = MigrationContext(editor: editor, store: store, step: step.name)
    let recording = editor as? any ChangeRecordingEditor
    if let recording, try recording.recordsChanges() { context.changes = ChangeCollector() }
    do {
      try context.storing {
        try step.body(context)
        try editor.flushInserts()
      }
      if let recording, let changes = context.changes, !changes.isEmpty {
        try recording.recordChanges(changes)
      }
    } catch let error as CofferError where error.code == .migrationFailed {
      throw error
    } catch {
      throw context.failure("\(describe(error))", underlying: error as? CofferError)
    }
    let now = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
    try editor.record(
      MigrationRecord(name: step.name, position: position, appliedAt: now, rowsTouched: context.rowsTouched))
    return .ran(position: position, rowsTouched: context.rowsTouched, before: record)
  }

  /// A step's error in words for a ``CofferError/Code/migrationFailed`` message: a
  /// ``CofferError``'s message, or the type of any other error (whose text may hold values).
  private static func describe(_ error: any Error) -> String {
    if let error = error as? CofferError { return error.message }
    return "the step threw \(type(of: error))."
  }

  /// Refuses a record of steps that the plan does not begin with.
  static func check(_ record: [MigrationRecord], against plan: MigrationPlan, store: String?) throws {
    for entry in record {
      guard entry.position < plan.steps.count else {
        throw CofferError(
          .unknownMigration,
          "The store has run migration step '\(entry.name)' (number \(entry.position)), which this app's plan "
            + "does not have: a newer version of the app migrated it. Open it with that version or a newer one; "
            + "it was left untouched.", store: store)
      }
      let expected = plan.steps[entry.position].name
      guard expected == entry.name else {
        throw CofferError(
          .unknownMigration,
          "The store's migration step number \(entry.position) is '\(entry.name)', where this app's plan has "
            + "'\(expected)': the plan was edited after the store was migrated, or the store belongs to another "
            + "app. Steps that shipped must never change; the store was left untouched.", store: store)
      }
    }
  }

  private static func report(_ plan: MigrationPlan, alreadyApplied: Int, ran: [Int: Int], rehearsal: Bool)
    -> MigrationReport
  {
    MigrationReport(
      steps: plan.steps.enumerated().map { position, step in
        let outcome: MigrationReport.Step.Outcome =
          ran[position] != nil ? .applied : position < alreadyApplied ? .alreadyApplied : .notRun
        return MigrationReport.Step(
          name: step.name, summary: step.summary, position: position, outcome: outcome,
          rowsTouched: ran[position] ?? 0)
      }, isRehearsal: rehearsal)
  }
}
