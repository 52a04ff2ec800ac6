import Logging

extension Store {
  /// Opens the store a URL names and brings its data up to date with a migration plan before
  /// anything else touches it: ``open(url:registry:logger:)``, then ``migrate(_:)``.
  ///
  /// - Throws: what opening throws; ``CofferError/Code/unknownMigration`` when the store has
  ///   run steps the plan does not have (a newer app migrated it);
  ///   ``CofferError/Code/migrationFailed`` when a step fails. The store is closed again when
  ///   migrating fails, and left after the last step that succeeded.
  public static func open(
    url: String, registry: BackendRegistry, logger: Logger? = nil, migrating plan: MigrationPlan
  ) async throws -> Store {
    let store = try await open(url: url, registry: registry, logger: logger)
    do {
      try await store.migrate(plan)
    } catch {
      try? await store.close()
      throw error
    }
    return store
  }

  /// Runs the steps of a plan that the store has not run yet, in order, each in one write
  /// transaction that also records it in the store — so each step is applied whole or not at
  /// all, a plan run twice changes nothing the second time, and a process killed during a step
  /// leaves the store before it (the next run continues from there).
  ///
  /// Run it before the app's types touch the store (``open(url:registry:logger:migrating:)``
  /// does). A type this `Store` prepared before prepares its entity again at its next use; an
  /// entity prepared for the row API goes on with the schema the plan left it in.
  ///
  /// ```swift
  /// let report = try await store.migrate(plan)
  /// print(report)   // one line per step: already applied, or applied with the rows touched
  /// ```
  ///
  /// - Returns: what became of each step.
  /// - Throws: ``CofferError/Code/unknownMigration`` when the store has run a step the plan
  ///   does not have at that position (the store is untouched);
  ///   ``CofferError/Code/migrationFailed`` for the first step that fails (it applied nothing;
  ///   the steps before it stay applied); ``CofferError/Code/invalidConfiguration`` for a plan
  ///   with an unnamed or repeated step; ``CofferError/Code/unsupported`` for a backend that is
  ///   not ``SchemaEditing``.
  @discardableResult
  public func migrate(_ plan: MigrationPlan) async throws -> MigrationReport {
    try await migrate(plan, progress: nil)
  }

  /// ``migrate(_:)``, calling `progress` after each step it runs.
  @discardableResult
  package func migrate(_ plan: MigrationPlan, progress: (@Sendable (MigrationProgress) -> Void)?) async throws
    -> MigrationReport
  {
    let report = try await observed(.migrate, entity: nil) {
      try await rethrowing { try await MigrationRunner.run(plan, on: backend, progress: progress) }
    }
    telemetry?.countMigrationSteps(report)
    // Only entities prepared for the row API need their stored schemas read again.
    let hasRowEntities = prepared.withLock { state in state.schemas.keys.contains { state.owners[$0] == nil }
    }
    let stored = hasRowEntities ? try await rethrowing { try await backend.prepare([]) } : []
    // Types prepare their entities again at their next use; entities prepared for the row API
    // go on with the schema they are stored in now.
    prepared.withLock { state in
      let rowEntities = state.schemas.keys.filter { state.owners[$0] == nil }
      state = Prepared()
      for schema in stored where rowEntities.contains(schema.name) {
        state.schemas[schema.name] = schema
        state.claim(schema.name, for: nil)
      }
    }
    forgetReferences()
    logger.info(
      "Migrated the store",
      metadata: [
        "coffer.stepsApplied": .stringConvertible(report.appliedCount),
        "coffer.steps": .stringConvertible(plan.steps.count),
      ])
    return report
  }

  /// Runs a plan on a copy of the store held in memory and reports, step by step, what it would
  /// do — the rows each step touches, and the first step that would fail with its error —
  /// leaving the store untouched. What `coffer migrate --dry-run` prints.
  ///
  /// The copy holds every row of the store, read from one snapshot where the backend keeps
  /// snapshots; rehearse on a machine with the memory for it.
  ///
  /// - Throws: ``CofferError/Code/unknownMigration`` as ``migrate(_:)`` does; errors reading
  ///   the store. A failing step is reported, not thrown.
  public func rehearseMigration(_ plan: MigrationPlan) async throws -> MigrationReport {
    try await rehearseMigration(plan, progress: nil)
  }

  /// ``rehearseMigration(_:)``, calling `progress` after each step it rehearses.
  package func rehearseMigration(
    _ plan: MigrationPlan, progress: (@Sendable (MigrationProgress) -> Void)?
  ) async throws -> MigrationReport {
    let backend = self.backend
    var tables = InMemoryTables(storeName: backend.name)
    if let editing = backend as? any SchemaEditing {
      tables.migrations = try await rethrowing { try await editing.editSchema { try $0.migrations() } }
    }
    let schemas = try await storedSchemas(named: nil)
    try tables.prepare(schemas)
    try await withRowReader { reader in
      for schema in schemas {
        var rows: [Row] = []
        try await reader.read(RowReader.all(of: schema)) { rows.append(try Row($0)) }
        try tables.load(rows, into: schema.name)
      }
    }
    var report = try MigrationRunner.rehearse(plan, on: &tables, progress: progress)
    let result = tables
    let reader = RowReader(read: { try result.read($0, $1) }, count: { try result.count($0) })
    report.digest = try await reader.digest(of: result.schemas.values.sorted { $0.name < $1.name })
    return report
  }

  /// The migration steps the store has run, in order, as its catalog records them; empty for
  /// a store no plan has migrated.
  ///
  /// - Throws: ``CofferError/Code/unsupported`` for a backend that is not ``SchemaEditing``.
  public func migrations() async throws -> [MigrationRecord] {
    try await rethrowing { try await backend.schemaEditing().editSchema { try $0.migrations() } }
  }
}
