@_spi(Backend) import Coffer

/// The reader connections: queries check one out, use it, and return it, so that reads run in
/// parallel with each other and with the writer (WAL mode: readers never wait for a write).
final class SQLiteReaderPool: Sendable {
  private struct State {
    var idle: [SQLiteConnection] = []
    var isOpen = true
  }

  private let idle = LockedState(State())
  private let open: @Sendable () throws -> SQLiteConnection
  private let keep: Int
  private let closed: @Sendable () -> CofferError

  init(
    keep: Int, open: @escaping @Sendable () throws -> SQLiteConnection,
    closed: @escaping @Sendable () -> CofferError
  ) {
    self.keep = keep
    self.open = open
    self.closed = closed
  }

  /// Runs `body` with a reader of its own: an idle one, or a new one when all are busy.
  func withReader<R>(_ body: (SQLiteConnection) throws -> R) throws -> R {
    let connection = try checkOut()
    defer { checkIn(connection) }
    return try body(connection)
  }

  /// A reader for the caller alone, until it gives it back with ``checkIn(_:)``: an idle one,
  /// or a new one when all are busy.
  func checkOut() throws -> SQLiteConnection {
    let checkedOut = try idle.withLock { state -> SQLiteConnection? in
      guard state.isOpen else { throw closed() }
      return state.idle.popLast()
    }
    return try checkedOut ?? open()
  }

  /// Gives back a reader ``checkOut()`` gave, keeping it for the next caller while the pool is
  /// open and not full.
  func checkIn(_ connection: SQLiteConnection) {
    idle.withLock { state in
      if state.isOpen && state.idle.count < keep { state.idle.append(connection) }
    }
  }

  /// Refuses further reads and lets idle connections close; busy ones close when returned.
  func close() {
    idle.withLock { state in
      state.isOpen = false
      state.idle.removeAll()
    }
  }
}
