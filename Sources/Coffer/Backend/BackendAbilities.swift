// The optional abilities of a ``StorageBackend``, each a protocol a backend adopts when it has
// the ability: a snapshot of one state, migration steps, aggregates in the engine, a
// read-and-write under its own lock, noticing commits made elsewhere, describing and checking
// its storage, giving back cached memory.
//
// None has a default: adopting one without implementing its requirement does not compile.
// ``Store`` asks `backend as? any SnapshotReading` (and so on) and, when the backend has not
// adopted the protocol, does without (for aggregates and in-place changes, the same result by
// another road) or throws ``CofferError/Code/unsupported``. The conformance suite runs the
// checks of an ability exactly on the backends that adopt it.

/// A backend that can run several reads on one committed state: ``Store/snapshot(_:)``,
/// consistent pages, and data tools that read a whole store while writers go on.
@_spi(Backend) public protocol SnapshotReading: StorageBackend {
  /// Runs `body` with a view of one committed state: every read through the
  /// ``StorageSnapshot`` sees the store as it was when the snapshot began, whatever is applied
  /// meanwhile, and a batch applied while it is open is invisible to it.
  ///
  /// Guarantees: the view holds no write lock (writers go on while it is open) and is valid
  /// only until `body` returns.
  func withSnapshot<R>(_ body: (any StorageSnapshot) async throws -> R) async throws -> R
}

/// A read-only view of one committed state of a store, valid inside
/// ``SnapshotReading/withSnapshot(_:)``. Its reads have the guarantees of
/// ``StorageBackend/read(_:_:)`` and ``StorageBackend/count(_:)``, all on the same state.
@_spi(Backend) public protocol StorageSnapshot: Sendable {
  /// Reads the rows a query selects, as ``StorageBackend/read(_:_:)`` does.
  func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws
  /// Counts the rows a query's filter selects, as ``StorageBackend/count(_:)`` does.
  func count(_ query: Query) async throws -> Int
}

/// A backend that runs each attempt of a ``Store/transaction(retries:_:)`` (its body, its reads
/// and its commit) in a context of its own: PostgreSQL holds one pooled connection for it and
/// runs it on that connection's thread, so that its reads and its commit neither wait for the
/// pool nor cross threads.
@_spi(Backend) public protocol TransactionHosting: StorageBackend {
  /// Runs `attempt` once and returns what it returns or throws what it throws.
  ///
  /// Guarantees: `attempt` runs exactly once, to its end; every read and batch it makes is
  /// the same as outside (the host changes where they run, never what they see or do), and
  /// nothing stays held after it returns.
  func hostTransaction<R>(_ attempt: () async throws -> R) async throws -> R
}

/// A backend that can run migration steps: ``Store/migrate(_:)`` and the migration record.
@_spi(Backend) public protocol SchemaEditing: StorageBackend {
  /// Runs `body` in one write transaction with a ``SchemaEditor`` over the store's entities
  /// and its record of migrations, committing everything it did when it returns and nothing
  /// when it throws — the error is rethrown as it is. What ``Store/migrate(_:)`` runs each
  /// migration step in.
  ///
  /// Guarantees: atomic and, on a backend that declares ``BackendCapabilities/durable``,
  /// durable once it returns; a process killed during it leaves the store as it was before.
  /// Batches and other edits wait for it (or it for them); readers go on and see the state
  /// before or after, never between. `body` runs off the concurrency pool's threads where the
  /// transaction blocks. `body` may run more than once — a backend may abort the transaction
  /// and run it again from the start on a fresh editor (LMDB does when its map fills up) — so
  /// it must act only through the editor. After it returns, ``StorageBackend/prepare(_:)`` and
  /// every read see the new entities.
  func editSchema<R: Sendable>(_ body: @Sendable (any SchemaEditor) throws -> R) async throws -> R
}

/// A backend that computes aggregates in its engine (SQLite, PostgreSQL) instead of handing
/// every row to ``AggregateEvaluator``.
@_spi(Backend) public protocol AggregateComputing: StorageBackend {
  /// Computes an aggregate — a count, a count of distinct values, a sum, a minimum, a maximum
  /// or an average — over the rows an ``Aggregation``'s filter selects, once or per group.
  ///
  /// Guarantees: the result is the one ``AggregateEvaluator`` computes from
  /// ``StorageBackend/read(_:_:)`` (what the store uses for a backend without this ability):
  /// one group when ``Aggregation/groupBy`` is `nil` (its key ``Value/null``), otherwise one
  /// per distinct key in ascending ``ValueOrder``, the null key first; integer sums exact, a sum
  /// outside `Int64` ``CofferError/Code/valueOutOfRange`` whatever the order of the rows; sums
  /// and averages of doubles within ``Aggregation/relativeTolerance``, with infinities as
  /// ``Aggregation`` says. Finish with ``AggregateEvaluator``'s helpers, and fall back to
  /// ``AggregateEvaluator/evaluate(_:on:)`` for a case the engine cannot compute identically.
  /// Only the query's entity, filter and layout count.
  ///
  /// - Throws: ``CofferError/Code/unknownEntity`` for an entity that was not prepared;
  ///   ``CofferError/Code/valueOutOfRange`` as above.
  func aggregate(_ aggregation: Aggregation) async throws -> [AggregateGroup<Value, Value>]
}

/// A backend that can read a row and store its replacement under a writer lock it holds
/// anyway, with no round trip and nothing to run again: what ``Store/modify(_:id:retries:_:)``
/// asks for first.
@_spi(Backend) public protocol InPlaceModifying: StorageBackend {
  /// Reads the row of an entity with an id, and stores in its place the row `change` makes of
  /// it, as one atomic step that no other writer can come between.
  ///
  /// `change` gets the stored row in the layout of `schema` (`nil` when no row has the id) and
  /// returns the new row in that layout, or throws, and then nothing is stored and its error
  /// comes out as it is. It is synchronous and may hold the backend's lock while it runs. Call
  /// it in the calling task, never on a thread of the backend's own: it is the app's code, and
  /// may be isolated to the app's actor, which runs other work while this call awaits. The
  /// new row is stored as ``StorageBackend/apply(_:)`` stores an update, with the same errors.
  ///
  /// - Returns: `false`, having called nothing and changed nothing, when the backend cannot
  ///   take this path now (the entity's stored layout is not `schema`); the store then reads
  ///   the row and applies the update on the condition that the row is unchanged.
  func modifyInPlace(_ schema: EntitySchema, id: Value, _ change: (Row?) throws -> Row) async throws -> Bool
}

/// A backend that can tell when its data was committed to, so that observed queries notice
/// commits the store did not make itself.
@_spi(Backend) public protocol CommitObserving: StorageBackend {
  /// A number that changes whenever a batch is committed to the store's data by anyone — this
  /// handle, another handle on the same data, another process (when the backend declares
  /// ``BackendCapabilities/observesOtherHandles``) — or `nil` when it cannot tell now. Cheap:
  /// ``Store`` asks for it every few tens of milliseconds while a query is observed.
  func commitMarker() async throws -> UInt64?
}

/// A backend that can say what its storage is and check the engine's own structures, for
/// `coffer inspect` and `Store.verify()`.
@_spi(Backend) public protocol StorageInspecting: StorageBackend {
  /// What the store's storage is: the format version it is written in and the bytes it takes
  /// on disk (or on the server), where the backend can tell. Cheap: it reads no rows.
  func describeStorage() async throws -> StorageDescription

  /// Checks the engine's own structures for damage that reading rows through
  /// ``StorageBackend/read(_:_:)`` would not show — a SQLite page or index out of step with its
  /// table, an LMDB index entry without its row, a PostgreSQL constraint that does not hold —
  /// and returns one problem per finding, empty when there is none.
  ///
  /// Guarantees: it changes nothing, and may take as long as reading the whole store. The
  /// checks every backend shares (each row readable and of its schema, ids and unique indexes
  /// holding, counts and index order agreeing with a full scan) are made by
  /// `Store.verify()` on top of it, once for every backend; this adds only what is
  /// particular to the engine.
  func checkStorage() async throws -> [IntegrityProblem]
}

/// A backend that holds memory only to make later reads faster — for a store read through a
/// memory map of its file, the file's pages mapped into this process — and can give it back.
@_spi(Backend) public protocol CachedMemoryReleasing: StorageBackend {
  /// Gives back the memory. The data tools call it every few tens of thousands of rows while
  /// they read or write a whole store, so a copy, an export or a digest of a large store does
  /// not end up holding the whole file resident.
  ///
  /// Guarantees: it changes nothing a read returns or a write stores, and is safe while reads
  /// and writes run on other threads, also in the middle of one (reading a row handed to a
  /// visitor included); they may only be slower for a moment. It does not block.
  func releaseCachedMemory()
}

extension StorageBackend {
  /// The aggregate, computed by the engine when the backend is ``AggregateComputing``, by
  /// ``AggregateEvaluator`` over ``read(_:_:)`` otherwise.
  func computeAggregate(_ aggregation: Aggregation) async throws -> [AggregateGroup<Value, Value>] {
    if let engine = self as? any AggregateComputing { return try await engine.aggregate(aggregation) }
    return try await AggregateEvaluator.evaluate(aggregation, on: self)
  }

  /// ``CachedMemoryReleasing/releaseCachedMemory()`` when the backend has the ability; nothing
  /// otherwise.
  package func releaseCachedMemoryIfAny() {
    (self as? any CachedMemoryReleasing)?.releaseCachedMemory()
  }

  /// The backend as ``SnapshotReading``, or ``CofferError/Code/unsupported``.
  func snapshotReading() throws -> any SnapshotReading {
    guard let reading = self as? any SnapshotReading else {
      throw CofferError(
        .unsupported, "This backend cannot read a consistent snapshot of the store.", store: name)
    }
    return reading
  }

  /// The backend as ``SchemaEditing``, or ``CofferError/Code/unsupported``.
  func schemaEditing() throws -> any SchemaEditing {
    guard let editing = self as? any SchemaEditing else {
      throw CofferError(
        .unsupported,
        "This backend cannot run migration steps; copy the store to one that can and migrate that.",
        store: name)
    }
    return editing
  }

  /// The names of the abilities the backend adopts, for reports: `snapshots`, `migrations`,
  /// `engineAggregates`, `inPlaceModify`, `commitMarker`, `storageInspection`,
  /// `cachedMemoryRelease`.
  package var abilityNames: [String] {
    var names: [String] = []
    if self is any SnapshotReading { names.append("snapshots") }
    if self is any SchemaEditing { names.append("migrations") }
    if self is any AggregateComputing { names.append("engineAggregates") }
    if self is any InPlaceModifying { names.append("inPlaceModify") }
    if self is any CommitObserving { names.append("commitMarker") }
    if self is any StorageInspecting { names.append("storageInspection") }
    if self is any CachedMemoryReleasing { names.append("cachedMemoryRelease") }
    return names
  }
}
