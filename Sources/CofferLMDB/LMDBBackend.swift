import CLMDB
@_spi(Backend) import Coffer
import Logging
import Synchronization

/// A store in an LMDB environment: a directory holding `data.mdb` and `lock.mdb`.
///
/// Each entity is one LMDB database from an order-preserving id key to a compact row, and each
/// index one sorted-duplicates database from an order-preserving index key to ids; so point
/// reads, and equality, range, prefix and sorted queries on the id or an index, are B-tree
/// lookups and cursor walks. Other filters scan with the core's evaluator.
///
/// Reads never wait for writers. Writes are serialized and each batch is one LMDB transaction,
/// committed durably before ``apply(_:)`` returns. The map grows as needed up to
/// ``Configuration/maxMapSize``. Several processes may open one store at once.
///
/// ```swift
/// let store = try await Store.open(url: "lmdb:///var/app/store?mapSize=1GiB", registry: .builtIn)
/// ```
///
/// Docs/LMDB.md describes options and behaviour; Docs/Formats.md the layout.
public final class LMDBBackend {
  /// `lmdb:///ABSOLUTE/PATH` or `lmdb:RELATIVE/PATH`, with its options.
  public let name: String
  /// Reopenable, durable, multi-process, atomic across entities, evolving, seeing other
  /// processes' commits.
  @_spi(Backend) public let capabilities: BackendCapabilities = [
    .reopenable, .durable, .multiProcess, .crossEntityTransactions, .schemaEvolution, .preconditions,
    .observesOtherHandles,
  ]
  /// The settings the store was opened with.
  public let configuration: Configuration
  /// The store directory.
  public let path: String

  let environment: LMDBEnvironment
  let catalog: MDB_dbi
  let entities = LockedState<[String: EntityHandle]>([:])
  /// The catalog's schema generation the prepared entities' handles were checked against (see
  /// ``checkHandlesCurrent(for:in:)``).
  let generation = Atomic<UInt64>(0)
  /// The indexes reads may walk, by handle, at the generation last checked (see
  /// ``walkable(_:in:)``).
  let walkableHandles = LockedState(WalkableHandles(generation: 0))
  private let closed = Atomic<Bool>(false)
  /// The change feed's state in this handle (see `LMDBBackend+Changes.swift`).
  let feed = LMDBChangeFeed()

  /// Opens (or creates) the store in the directory `path`.
  ///
  /// - Throws: ``CofferError/Code/corruptStore`` when the path is a file, a directory holding
  ///   something else, an LMDB store Coffer did not make, a damaged or truncated store, or one
  ///   written by a newer Coffer (all left untouched); ``CofferError/Code/io`` when the
  ///   directory cannot be created or opened.
  public init(
    path: String, configuration: Configuration = Configuration(), name: String? = nil, logger: Logger? = nil
  ) throws {
    let name = name ?? StoreURL(scheme: "lmdb", path: path).description
    self.name = name
    self.path = path
    self.configuration = configuration
    let logger = (logger ?? .disabled).forStore(name)
    let environment = try OpenEnvironments.acquire(
      path: path, configuration: configuration, context: StoreContext(name: name, path: path, logger: logger))
    do {
      let opened = try environment.write { transaction in
        let catalog = try Catalog.open(in: transaction)
        return (catalog, try Catalog.generation(in: transaction, catalog: catalog))
      }
      catalog = opened.0
      generation.store(opened.1, ordering: .releasing)
    } catch {
      OpenEnvironments.release(environment)
      throw error
    }
    self.environment = environment
    logger.debug(
      "Opened the LMDB environment",
      metadata: [
        "coffer.path": .string(path), "coffer.mapSize": .stringConvertible(environment.mapSize),
        "coffer.maxMapSize": .stringConvertible(configuration.maxMapSize),
      ])
  }

  /// Drops the store's pages mapped into this process; see
  /// ``LMDBEnvironment/releaseMappedPages()``.
  public func releaseCachedMemory() { environment.releaseMappedPages() }

  /// Releases the store. Everything applied is already on disk. Closing twice is harmless.
  public func close() async throws {
    guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
    OpenEnvironments.release(environment)
  }

  /// Gives the environment back if the backend was dropped without being closed.
  deinit {
    if !closed.exchange(true, ordering: .acquiringAndReleasing) { OpenEnvironments.release(environment) }
  }

  /// The handle of a prepared entity.
  func handle(_ entity: String) throws -> EntityHandle {
    try checkOpen()
    guard let handle = entities.withLock({ $0[entity] }) else {
      throw CofferError(
        .unknownEntity,
        "Entity '\(entity)' was never prepared in this store. Prepare it first (Store does this for you).",
        store: name, entity: entity)
    }
    return handle
  }

  func checkOpen() throws {
    if closed.load(ordering: .acquiring) { throw environment.closedError() }
  }
}

extension LMDBBackend: QueuedWrites {
  package var writeQueue: BlockingQueue { environment.writeQueue }
}

// The optional abilities whose methods are above.
@_spi(Backend) extension LMDBBackend: CachedMemoryReleasing {}

// The SPI conformance: apps reach a backend only through `Store`.
@_spi(Backend) extension LMDBBackend: StorageBackend {}
