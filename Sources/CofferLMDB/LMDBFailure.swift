import CLMDB
@_spi(Backend) import Coffer
import Logging

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where an LMDB call failed, for the errors it turns into.
struct StoreContext: Sendable {
  /// The store URL, for ``CofferError/store``.
  let name: String
  /// The environment directory.
  let path: String
  /// Where the environment logs (map growth), with the store's name as metadata.
  var logger: Logger = .disabled

  /// The error for a liblmdb return code, saying what was being done and what to do about it.
  func error(_ code: Int32, _ action: String, entity: String? = nil) -> CofferError {
    let reason = String(cString: mdb_strerror(code))
    func make(_ kind: CofferError.Code, _ advice: String) -> CofferError {
      CofferError(
        kind, "Could not \(action): \(reason). \(advice)", store: name, entity: entity, path: path)
    }
    switch code {
    case ENOSPC, EDQUOT:
      return make(
        .storageFull, "The disk is full; free space on it and try again. Nothing in the batch was applied.")
    case MDB_MAP_FULL:
      return make(.storageFull, "Raise the store's maxMapSize option. Nothing in the batch was applied.")
    case MDB_DBS_FULL:
      return make(
        .storageFull,
        "A store holds at most \(LMDBEnvironment.maxDatabases) LMDB databases (one per entity and one per index)."
      )
    case MDB_READERS_FULL:
      return make(.locked, "Too many readers have the store open; raise the maxReaders option.")
    case MDB_TXN_FULL:
      return make(.storageFull, "The batch changes too many pages for one transaction; split it.")
    case MDB_INVALID, MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_VERSION_MISMATCH, MDB_INCOMPATIBLE, MDB_PANIC:
      return make(
        .corruptStore,
        "The store's files are damaged or were not written by a compatible LMDB; they were left untouched. "
          + "Restore the directory from a backup.")
    case EACCES, EPERM, EROFS:
      return make(.io, "Check that the directory exists and that this user may read and write it.")
    case EAGAIN, EBUSY:
      return make(.locked, "Another process holds the store's lock; try again.")
    case MDB_BAD_VALSIZE:
      return make(
        .invalidValue,
        "An id or indexed value encodes to more than \(LMDBEnvironment.maxKeySize) bytes, the most an LMDB key holds; "
          + "shorten it or remove the index.")
    default:
      return make(.io, "Check the directory and the disk.")
    }
  }

  /// Throws the error for a return code that is not success.
  func check(_ code: Int32, _ action: @autoclosure () -> String) throws {
    if code != MDB_SUCCESS { throw error(code, action()) }
  }
}

/// Thrown inside a write transaction when the map is full, so that the transaction is retried
/// after the map grows. Never escapes ``LMDBEnvironment/write(_:)``.
struct MapFullSignal: Error {}
