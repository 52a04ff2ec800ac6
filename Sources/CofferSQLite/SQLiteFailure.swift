import CSQLite
@_spi(Backend) import Coffer

/// The error libsqlite3 reported, kept as the cause of a ``Coffer/CofferError``.
public struct SQLiteResult: Error, Sendable, CustomStringConvertible {
  /// The extended result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, …).
  public let code: Int32
  /// SQLite's own message.
  public let message: String

  /// `SQLite error CODE: MESSAGE`.
  public var description: String { "SQLite error \(code): \(message)" }
}

/// Turns libsqlite3 result codes into ``Coffer/CofferError``s a person can act on.
enum SQLiteFailure {
  static func error(
    code: Int32, message: String, path: String, store: String, while action: String, busyTimeout: Int = 0
  ) -> CofferError {
    let cause = SQLiteResult(code: code, message: message)
    func make(_ kind: CofferError.Code, _ text: String) -> CofferError {
      CofferError(kind, text, store: store, path: path, underlying: cause)
    }
    switch code & 0xFF {
    case SQLITE_BUSY, SQLITE_LOCKED:
      return make(
        .locked,
        "The database stayed locked by another connection or process for longer than the busy timeout "
          + "(\(busyTimeout) ms) while \(action). Retry later, stop the process holding the lock, or raise "
          + "busyTimeout in the store URL (sqlite:///path?busyTimeout=MS). Nothing was changed.")
    case SQLITE_FULL:
      return make(
        .storageFull,
        "The disk is full (or the file reached its size limit) while \(action); nothing in the batch was "
          + "applied and the data already committed is intact. Free some space and retry.")
    case SQLITE_NOTADB:
      return make(
        .corruptStore,
        "The file is not a SQLite database (found while \(action)). It was left untouched: point the store "
          + "URL at a SQLite database or at a path that does not exist yet.")
    case SQLITE_CORRUPT:
      return make(
        .corruptStore,
        "The database file is damaged (found while \(action)). It was left untouched: restore it from a "
          + "backup, or try 'sqlite3 FILE .recover' on a copy.")
    case SQLITE_READONLY:
      return make(
        .io,
        "The database cannot be written while \(action): the file, its directory or its -wal/-shm files are "
          + "read-only. Give this process write permission on them (the directory too: SQLite creates files "
          + "beside the database).")
    case SQLITE_CANTOPEN:
      return make(
        .io,
        "The database cannot be opened or created while \(action): check that the directory exists and that "
          + "this process may read and write the file and its directory.")
    case SQLITE_PERM, SQLITE_AUTH:
      return make(.io, "The operating system refused access while \(action); check the file's permissions.")
    case SQLITE_IOERR:
      return make(
        .io,
        "An input/output error occurred while \(action). Check the disk and the file system; nothing in the "
          + "batch was applied.")
    case SQLITE_NOMEM:
      return make(.backendFailure, "SQLite ran out of memory while \(action).")
    default:
      return make(.backendFailure, "SQLite failed while \(action): \(message).")
    }
  }
}
