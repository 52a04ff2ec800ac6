@_spi(Backend) import Coffer
import Foundation

/// Copies every entity of one store into another — any backend to any backend — with its exact
/// stored schema, in batches, and proves the copy complete by comparing digests.
///
/// ```swift
/// let source = try await Store.open(url: "plist:///var/app/store.plist", registry: .builtIn)
/// let target = try await Store.open(url: "sqlite:///var/app/store.sqlite", registry: .builtIn)
/// let report = try await StoreCopier(from: source, to: target).run { progress in
///   print(progress.rowsCopied, "of", progress.totalRows)
/// }
/// precondition(report.isVerified)
/// ```
///
/// - Each entity is read in id order, a batch at a time (keyset paging), so memory holds a
///   batch or two however large the store; each batch is one atomic insert into the target.
/// - The source is only read, in one snapshot when its backend has
///   ``SnapshotReading`` (the copy and its digest then describe one state).
/// - The target must hold no rows, unless ``resume`` is set: an interrupted copy left every
///   entity's rows up to some id, and a resumed run continues after the last one copied,
///   never inserting a row twice. Before it skips the rows already there, it checks that they
///   are exactly the source's (a digest of each side), and refuses with
///   ``CofferError/Code/conflict`` when the target's were changed since.
/// - With ``verify`` (the default), both stores' digests are compared at the end;
///   ``CopyReport/isVerified`` says whether they matched.
public struct StoreCopier: Sendable {
  /// The store read from.
  public let source: Store
  /// The store written to.
  public let target: Store
  /// Most rows per batch: per read of the source and per atomic insert into the target. A
  /// batch also holds at most about 16 MiB of values, so rows with large values go in smaller
  /// batches.
  public var batchSize = 50_000
  /// Continue an interrupted copy instead of refusing a target that holds rows.
  public var resume = false
  /// Compare the two stores' digests when the copy is done.
  public var verify = true
  /// The entities to copy, or `nil` for every entity the source holds.
  public var entities: [String]?

  /// A copier from one store to another, with the default settings.
  public init(from source: Store, to target: Store) {
    self.source = source
    self.target = target
  }

  /// Copies, calling `progress` after every batch (and once per entity before its first),
  /// and returns what was copied and whether the digests matched. Cancelling the task stops
  /// the copy before its next batch with `CancellationError`; ``events()`` gives the same
  /// copy as an asynchronous sequence.
  ///
  /// - Throws: ``CofferError/Code/notEmpty`` when the target holds rows and ``resume`` is
  ///   not set; ``CofferError/Code/schemaMismatch`` when the target stores an entity with
  ///   another schema; ``CofferError/Code/conflict`` when a resumed target holds rows an
  ///   earlier copy from this source cannot have left (other ids, or the same ids with other
  ///   values); ``CofferError/Code/unknownEntity`` for
  ///   a named entity the source does not hold; or either backend's error. Batches committed
  ///   before an error stay in the target, and a run with ``resume`` continues after them.
  public func run(progress: @Sendable (CopyProgress) -> Void = { _ in }) async throws -> CopyReport {
    guard batchSize > 0 else {
      throw CofferError(
        .invalidConfiguration, "A copy's batch size must be at least 1.", store: source.backend.name)
    }
    let started = ContinuousClock.now
    let schemas = try await source.storedSchemas(named: entities)
    try await prepareTarget(for: schemas)
    let copy = try await source.withRowReader { reader in
      try await copyAll(schemas, reader: reader, started: started, progress: progress)
    }
    var report = copy.0
    if verify, let sourceDigest = copy.1 {
      let targetDigest = try await target.digest(entities: schemas.map(\.name))
      report.sourceDigest = sourceDigest
      report.targetDigest = targetDigest
      report.differences += sourceDigest.differences(from: targetDigest)
    }
    report.duration = ContinuousClock.now - started
    return report
  }

  /// Refuses a target that is not empty (unless resuming) or stores an entity with another
  /// schema, then prepares the source's schemas on it.
  private func prepareTarget(for schemas: [EntitySchema]) async throws {
    let stored = Dictionary(
      try await target.storedSchemas(named: nil).map { ($0.name, $0) },
      uniquingKeysWith: { first, _ in first })
    for (name, schema) in stored.sorted(by: { $0.key < $1.key }) {
      var query = Query(entity: name)
      query.layout = schema
      let rows = try await target.rethrowing { try await target.backend.count(query) }
      if rows > 0, !resume {
        throw CofferError(
          .notEmpty,
          "The target already holds rows (\(rows) of this entity). Copy into an empty store, or resume an "
            + "interrupted copy (`resume`, `coffer copy --resume`).",
          store: target.backend.name, entity: name)
      }
    }
    for schema in schemas {
      if let existing = stored[schema.name], existing != schema {
        throw CofferError(
          .schemaMismatch,
          "The target stores this entity with another schema than the source. Copy into an empty store, or "
            + "migrate one of them first.",
          store: target.backend.name, entity: schema.name)
      }
    }
    try await target.prepare(schemas: schemas)
  }

  /// Copies every entity through `reader`, digesting the source's rows as they go by when
  /// verifying (the digest is a sum over rows, so the rows a resumed copy found already copied
  /// are read once more and added, and the source is never read twice).
  private func copyAll(
    _ schemas: [EntitySchema], reader: RowReader, started: ContinuousClock.Instant,
    progress: @Sendable (CopyProgress) -> Void
  ) async throws -> (CopyReport, StoreDigest?) {
    var totals: [Int] = []
    for schema in schemas { totals.append(try await reader.count(of: schema)) }
    var state = CopyProgress(
      entity: "", entityRowsCopied: 0, entityRows: 0, rowsCopied: 0, totalRows: totals.reduce(0, +),
      elapsed: .zero)
    var report = CopyReport()
    var digests: [EntityDigest] = []
    for (schema, total) in zip(schemas, totals) {
      var digester = RowDigester(schema: schema)
      var (last, already): (Value?, Int) = (nil, 0)
      if resume { last = try await resumePoint(of: schema) }
      if let last {
        (digester, already) = try await checkedPrefix(of: schema, upTo: last, reader: reader)
        if !verify { digester = RowDigester(schema: schema) }
      }
      state.entity = schema.name
      state.entityRows = total
      state.entityRowsCopied = already
      state.rowsCopied += already
      state.elapsed = ContinuousClock.now - started
      progress(state)
      var copied = 0
      let targetBackend = target.backend
      var written = RowReader.ReleaseSchedule { targetBackend.releaseCachedMemoryIfAny() }
      let verify = self.verify
      try await reader.pages(of: schema, after: last, pageSize: batchSize) { rows in
        try Task.checkCancellation()
        // The page's digest is worked out while the target writes it.
        let current = digester
        async let part = verify ? current.part(rows) : nil
        try await target.apply(
          ChangeSet(
            [.insertMany(entity: schema.name, rows: RowSource(rows))], layouts: [schema.name: schema]),
          preconditionsChecked: false, enforcingReferences: false)
        if let part = await part { digester.merge(part) }
        written.count(rows.count)
        target.telemetry?.countCopied(rows.count, entity: schema.name)
        copied += rows.count
        state.entityRowsCopied += rows.count
        state.rowsCopied += rows.count
        state.elapsed = ContinuousClock.now - started
        progress(state)
      }
      digests.append(digester.digest)
      if already + copied != total {
        report.differences.append(
          "\(schema.name): a count of the source gives \(total) rows, but reading it in id order gave "
            + "\(already + copied).")
      }
      report.entities.append(EntityCopy(entity: schema.name, rowsCopied: copied, rowsAlreadyThere: already))
    }
    return (report, verify ? StoreDigest(entities: digests) : nil)
  }

  /// The digest of the source's rows of an entity up to `last`, and how many rows the target
  /// holds, after checking that the target holds exactly those rows (the digest counts them
  /// too): a resumed copy skips them, so other ids, or a row changed in the target since the
  /// interrupted run, are found here, before anything is written, not by the final comparison.
  private func checkedPrefix(of schema: EntitySchema, upTo last: Value, reader: RowReader) async throws
    -> (RowDigester, Int)
  {
    var prefix = RowReader.all(of: schema)
    prefix.filter = .compare(field: schema.idField.name, op: .lessOrEqual, value: last)
    var sourceDigester = RowDigester(schema: schema)
    try await reader.readReleasing(prefix) { try sourceDigester.add($0) }
    var targetDigester = RowDigester(schema: schema)
    try await target.rethrowing { try await target.backend.read(prefix) { try targetDigester.add($0) } }
    let (source, held) = (sourceDigester.digest, targetDigester.digest)
    guard source == held else {
      let what =
        source.count == held.count
        ? "differ from the source's: they were changed since the interrupted copy"
        : "number \(held.count) where the source holds \(source.count): they are not what an interrupted copy "
          + "from this source left"
      throw CofferError(
        .conflict,
        "The target's rows of this entity up to the id shown \(what), so resuming would leave a copy that is not "
          + "the source. Copy into an empty store instead.", store: target.backend.name, entity: schema.name,
        id: last)
    }
    return (sourceDigester, held.count)
  }

  /// Where a resumed copy of an entity continues: the largest id the target holds (every row it
  /// holds is at or before it), or `nil` when it holds none.
  private func resumePoint(of schema: EntitySchema) async throws -> Value? {
    var newest = Query(entity: schema.name, sort: [Sort(schema.idField.name, ascending: false)], limit: 1)
    newest.layout = schema
    var last: Value?
    try await target.rethrowing {
      try await target.backend.read(newest) { last = try $0.value(at: schema.idPosition) }
    }
    return last
  }
}

/// How far a copy has come: handed to the progress callback of ``StoreCopier/run(progress:)``.
public struct CopyProgress: Sendable {
  /// The entity being copied.
  public var entity: String
  /// Rows of that entity in the target so far (including those a resumed copy found there).
  public var entityRowsCopied: Int
  /// Rows of that entity in the source.
  public var entityRows: Int
  /// Rows of every entity in the target so far.
  public var rowsCopied: Int
  /// Rows of every entity copied, in the source.
  public var totalRows: Int
  /// Time since the copy began.
  public var elapsed: Duration
}

/// What one entity's copy did.
public struct EntityCopy: Sendable, Hashable {
  /// The entity.
  public var entity: String
  /// Rows this run inserted.
  public var rowsCopied: Int
  /// Rows a resumed run found already copied.
  public var rowsAlreadyThere: Int
}

/// What a copy did and whether it is proven complete: ``StoreCopier/run(progress:)``.
public struct CopyReport: Sendable {
  /// One entry per entity copied, sorted by name.
  public var entities: [EntityCopy] = []
  /// The source's digest, read in the same state the copy read (when verifying).
  public var sourceDigest: StoreDigest?
  /// The target's digest after the copy (when verifying).
  public var targetDigest: StoreDigest?
  /// Where the copy and the source differ — a digest, or a count of the source that reading it
  /// did not match; empty when nothing differs.
  public var differences: [String] = []
  /// How long the copy took, verification included.
  public var duration: Duration = .zero

  /// Rows this run inserted, over every entity.
  public var rowsCopied: Int { entities.reduce(0) { $0 + $1.rowsCopied } }

  /// Whether both digests were computed and match: every entity, schema, row count and row
  /// of the source is in the target.
  public var isVerified: Bool { sourceDigest != nil && targetDigest != nil && differences.isEmpty }
}

extension Store {
  /// Copies every entity of this store into `target` (see ``StoreCopier``) and returns what was
  /// copied and whether the digests matched.
  @discardableResult
  public func copy(
    to target: Store, resume: Bool = false, progress: @Sendable (CopyProgress) -> Void = { _ in }
  ) async throws -> CopyReport {
    var copier = StoreCopier(from: self, to: target)
    copier.resume = resume
    return try await copier.run(progress: progress)
  }
}
