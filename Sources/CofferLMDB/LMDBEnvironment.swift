import CLMDB
@_spi(Backend) import Coffer
import Foundation
import Logging
import Synchronization

/// One open LMDB environment (a store directory): its handle, idle read transactions, the
/// writer lock and the map's growth.
///
/// Read transactions are taken from a pool of reset ones (`MDB_NOTLS` lets any thread renew
/// them), so a point read costs no allocation. A write transaction runs start to commit
/// synchronously under ``writer``, so it never crosses threads and no other write of this
/// process interleaves; other processes are held off by LMDB's own lock.
///
/// `@unchecked Sendable`: `handle` is a liblmdb environment, safe to share between threads with
/// `MDB_NOTLS`; idle read transactions are guarded by the `idleReaders` lock, map changes by `gate`.
final class LMDBEnvironment: @unchecked Sendable {
  /// The most LMDB databases (entities plus indexes, plus the catalog) a store can hold.
  static let maxDatabases = 512
  /// The longest key liblmdb accepts.
  static let maxKeySize = 511
  /// The most reset read transactions kept for reuse; each keeps a reader slot.
  static let idleReaderLimit = 8

  let handle: OpaquePointer
  let context: StoreContext
  let maxMapSize: Int
  let gate = MapGate()
  /// Serializes write transactions. A plain lock: it guards no state of its own.
  private let writer = NSLock()
  /// The thread writes run on, off the Swift concurrency pool: waiting for the writer lock
  /// (which another process may hold) and the commit's `fsync` both block.
  private let blocking: BlockingQueue
  private let idleReaders = LockedState<[IdleReader]>([])
  private let closed = Atomic<Bool>(false)
  /// Where the map was last found (see ``releaseMappedPages()``).
  private let knownMap = LockedState<MappedRegion?>(nil)
  /// How many snapshots (read transactions held across suspensions) are open.
  private let openSnapshots = Atomic<Int>(0)
  /// How long a map change waits for open snapshots to end before it gives up.
  static let snapshotWait: Duration = .seconds(2)

  /// A reset read transaction, waiting to be renewed.
  ///
  /// `@unchecked Sendable`: only touched under the `idleReaders` lock, or by the one reader that
  /// took it out of the pool.
  struct IdleReader: @unchecked Sendable {
    let pointer: OpaquePointer
  }

  /// Opens the environment in `path` (a directory, created if missing), clearing reader slots
  /// left by processes that died.
  init(path: String, configuration: LMDBBackend.Configuration, context: StoreContext) throws {
    self.context = context
    self.maxMapSize = configuration.maxMapSize
    self.blocking = BlockingQueue(label: "coffer.lmdb.writer")
    try Self.prepareDirectory(path, context)
    let isNewStore = !FileManager.default.fileExists(atPath: path + "/data.mdb")
    var created: OpaquePointer?
    try context.check(mdb_env_create(&created), "create an LMDB environment")
    guard let handle = created else { throw context.error(ENOMEM, "create an LMDB environment") }
    do {
      try context.check(mdb_env_set_maxdbs(handle, MDB_dbi(Self.maxDatabases)), "configure the store")
      try context.check(
        mdb_env_set_maxreaders(handle, UInt32(configuration.maxReaders)), "configure the store")
      try context.check(mdb_env_set_mapsize(handle, configuration.mapSize), "configure the store")
      try context.check(mdb_env_open(handle, path, UInt32(MDB_NOTLS), 0o600), "open the LMDB store")
      // liblmdb syncs data.mdb at every commit but never the directories: without this, a power
      // cut could take the new store's names, and every commit acknowledged since with them.
      if isNewStore { Self.syncNames(of: path) }
      var dead: Int32 = 0
      try context.check(mdb_reader_check(handle, &dead), "clear readers left by processes that died")
      try Self.checkLength(handle, path: path, context: context)
    } catch {
      mdb_env_close(handle)
      throw error
    }
    self.handle = handle
  }

  /// Whether ``close()`` ran.
  var isClosed: Bool { closed.load(ordering: .acquiring) }

  /// Runs `body` in a read transaction that sees the last committed state.
  func read<R>(_ body: (Transaction) throws -> R) throws -> R {
    let pointer = try beginRead()
    defer { endRead(pointer) }
    return try body(Transaction(pointer: pointer, context: context))
  }

  /// Runs `body` in `pinned` (a snapshot's transaction) or, when it is `nil`, in a read
  /// transaction of its own.
  func read<R>(in pinned: Transaction?, _ body: (Transaction) throws -> R) throws -> R {
    if let pinned { return try body(pinned) }
    return try read(body)
  }

  /// Runs `body` with a read transaction that stays open until `body` returns, across its
  /// suspensions: a snapshot. While one is open in this process the map cannot grow (see
  /// ``resizing(_:_:)``).
  func withSnapshot<R>(_ body: (Transaction) async throws -> R) async throws -> R {
    openSnapshots.add(1, ordering: .acquiringAndReleasing)
    defer { openSnapshots.subtract(1, ordering: .acquiringAndReleasing) }
    let pointer = try beginRead()
    defer { endRead(pointer) }
    return try await body(Transaction(pointer: pointer, context: context))
  }

  /// Begins (or renews) a read transaction, holding the gate shared until ``endRead(_:)``.
  private func beginRead() throws -> OpaquePointer {
    while true {
      gate.enterShared()
      guard !closed.load(ordering: .relaxed) else {
        gate.leaveShared()
        throw closedError()
      }
      var pointer: OpaquePointer?
      var code: Int32
      if let idle = idleReaders.withLock({ $0.popLast() }) {
        code = mdb_txn_renew(idle.pointer)
        if code == MDB_SUCCESS {
          pointer = idle.pointer
        } else {
          mdb_txn_abort(idle.pointer)
          if code != MDB_MAP_RESIZED { code = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &pointer) }
        }
      } else {
        code = mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &pointer)
      }
      guard code == MDB_SUCCESS, let pointer else {
        gate.leaveShared()
        if code == MDB_MAP_RESIZED {
          try adoptMapSize()
          continue
        }
        throw context.error(code, "start a read transaction")
      }
      return pointer
    }
  }

  /// Resets a read transaction for reuse and leaves the gate.
  private func endRead(_ pointer: OpaquePointer) {
    mdb_txn_reset(pointer)
    idleReaders.withLock { idle in
      if idle.count < Self.idleReaderLimit {
        idle.append(IdleReader(pointer: pointer))
      } else {
        mdb_txn_abort(pointer)
      }
    }
    gate.leaveShared()
  }

  /// Runs `body` in a write transaction and commits it; when the map fills up, aborts, grows the
  /// map and runs `body` again, up to the maximum map size. `body` must not keep effects outside
  /// the transaction, since it may run more than once.
  ///
  /// `committed` runs with the result once the transaction is committed, while this process
  /// still holds the writer lock, so no other write sees the state between the two (a
  /// prepare publishes its new entity handles there).
  @discardableResult
  func write<R>(_ body: (Transaction) throws -> R, committed: (R) -> Void = { _ in }) throws -> R {
    try writer.withLock {
      while true {
        gate.enterShared()
        guard !closed.load(ordering: .relaxed) else {
          gate.leaveShared()
          throw closedError()
        }
        var pointer: OpaquePointer?
        var code = mdb_txn_begin(handle, nil, 0, &pointer)
        guard code == MDB_SUCCESS, let pointer else {
          gate.leaveShared()
          if code == MDB_MAP_RESIZED {
            try adoptMapSize()
            continue
          }
          throw context.error(code, "start a write transaction")
        }
        let result: R
        do {
          result = try body(Transaction(pointer: pointer, context: context))
        } catch is MapFullSignal {
          mdb_txn_abort(pointer)
          gate.leaveShared()
          try grow()
          continue
        } catch {
          mdb_txn_abort(pointer)
          gate.leaveShared()
          throw error
        }
        code = mdb_txn_commit(pointer)
        gate.leaveShared()
        if code == MDB_MAP_FULL {
          try grow()
          continue
        }
        if code == EIO, Self.isDiskFull(context.path) { code = ENOSPC }
        try context.check(code, "commit the batch")
        committed(result)
        return result
      }
    }
  }

  /// The queue whose thread runs the environment's writes.
  var writeQueue: BlockingQueue { blocking }

  /// ``write(_:committed:)`` on the environment's writer thread, while the calling task waits.
  @discardableResult
  func writeOffPool<R: Sendable>(
    _ body: @Sendable (Transaction) throws -> R, committed: @Sendable (R) -> Void = { _ in }
  ) async throws -> R {
    try await blocking.run { try self.write(body, committed: committed) }
  }

  /// The id of the last write transaction committed by any process, as a read transaction
  /// begun now sees it. (`mdb_env_info` reads the meta page, which is written a moment before
  /// new readers see the commit: a marker taken there could move before the data does.)
  func lastTransactionID() throws -> UInt64 {
    try read { UInt64(mdb_txn_id($0.pointer)) }
  }

  /// Drops this process's mapping of the store's pages, which a long read or write leaves
  /// resident; the next access to a page maps it again from the operating system's file cache.
  /// The map is shared, read-only and backed by the file (writes go through `pwrite`), so
  /// `MADV_DONTNEED` loses nothing and a transaction reading it meanwhile only faults pages
  /// back in. Holds the gate shared so that the map is not moved or resized meanwhile. Linux
  /// only: elsewhere it does nothing.
  func releaseMappedPages() {
    #if os(Linux)
      gate.enterShared()
      defer { gate.leaveShared() }
      guard !closed.load(ordering: .relaxed), let map = currentMap() else { return }
      _ = madvise(map.base, map.size, MADV_DONTNEED)
    #endif
  }

  #if os(Linux)
    /// The map's address and size. liblmdb does not tell where it mapped the file (its
    /// `me_mapaddr` is set only for fixed maps), so it is looked up in `/proc/self/maps` by the
    /// file's inode — once per map size, since only a resize moves the map. Called with the
    /// gate held shared.
    private func currentMap() -> MappedRegion? {
      let size = mapSize
      if let known = knownMap.withLock({ $0 }), known.size == size { return known }
      let file = context.path + "/data.mdb"
      guard let inode = (try? FileManager.default.attributesOfItem(atPath: file))?[.systemFileNumber] as? Int,
        let found = MappedRegion.find(inode: UInt64(inode), size: size)
      else { return nil }
      knownMap.withLock { $0 = found }
      return found
    }
  #endif

  /// The map's current size in bytes.
  var mapSize: Int {
    var info = MDB_envinfo()
    mdb_env_info(handle, &info)
    return info.me_mapsize
  }

  /// Doubles the map, up to ``maxMapSize``; past it, a `storageFull` error that says how to
  /// raise the limit.
  private func grow() throws {
    let current = mapSize
    guard current < maxMapSize else {
      let location = context.path.hasPrefix("/") ? "//" + context.path : context.path
      throw CofferError(
        .storageFull,
        "The store is full: its map reached the maximum of \(ByteSize.format(maxMapSize)). Open it with a larger "
          + "maxMapSize option, e.g. lmdb:\(location)?maxMapSize=\(ByteSize.format(maxMapSize * 2, compact: true)). "
          + "Nothing in the batch was applied.",
        store: context.name, path: context.path)
    }
    let next = min(maxMapSize, max(current * 2, current + (1 << 20)))
    try resizing("grow the store's map") {
      try context.check(mdb_env_set_mapsize(handle, next), "grow the store's map to \(ByteSize.format(next))")
    }
    context.logger.info(
      "Grew the LMDB map",
      metadata: ["coffer.from": .stringConvertible(current), "coffer.to": .stringConvertible(next)])
  }

  /// Adopts the larger map another process set.
  private func adoptMapSize() throws {
    try resizing("adopt the map size another process set") {
      try context.check(mdb_env_set_mapsize(handle, 0), "adopt the store's new map size")
    }
  }

  /// Runs a map change with no transaction running in this process. An open snapshot holds its
  /// transaction across suspensions, perhaps while it waits for this very change, so the change
  /// waits only a short while for snapshots to end and then fails with `locked`.
  private func resizing(_ action: String, _ body: () throws -> Void) throws {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: Self.snapshotWait)
    while openSnapshots.load(ordering: .acquiring) > 0 {
      guard clock.now < deadline else {
        throw CofferError(
          .locked,
          "LMDB must \(action), which it can do only while no snapshot (store.snapshot) is open in this "
            + "process, and one stayed open. End snapshots before writing from inside them, then try again. "
            + "Nothing was changed.",
          store: context.name, path: context.path)
      }
      usleep(1_000)
    }
    try gate.exclusive(body)
  }

  /// Waits for running transactions, then closes the environment. Later calls throw `closed`.
  func close() {
    gate.exclusive {
      guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
      for idle in idleReaders.withLock({ $0 }) { mdb_txn_abort(idle.pointer) }
      idleReaders.withLock { $0.removeAll() }
      mdb_env_close(handle)
    }
  }

  func closedError() -> CofferError {
    CofferError(
      .closed, "This store was closed. Open it again to use it.", store: context.name, path: context.path)
  }
}
