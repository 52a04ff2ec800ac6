extension SQLiteBackend {
  /// How much SQLite waits for the disk before a commit returns (`PRAGMA synchronous`).
  public enum Synchronous: String, Sendable, Hashable, CaseIterable {
    /// No flush: a killed process loses nothing, but a power cut may lose recent commits and can
    /// damage the database. For scratch data only.
    case off
    /// The write-ahead log is flushed at checkpoints only: a killed process loses nothing; a
    /// power cut may lose the last commits but never damages the database.
    case normal
    /// The log is flushed at every commit: a commit survives a killed process and a power cut.
    /// The default.
    case full
    /// As ``full``, with SQLite's extra directory flushes (which matter mostly outside WAL mode).
    case extra

    /// The value `PRAGMA synchronous` takes.
    var pragma: String { rawValue.uppercased() }
  }

  /// How an SQLite store is opened. Every setting can also be given in the store URL:
  /// `sqlite:///path/db.sqlite?busyTimeout=5000&synchronous=full&readers=4&logStatements=on`.
  public struct Configuration: Sendable, Hashable {
    /// How long, in milliseconds, a connection waits for a lock held by another connection or
    /// process before failing with ``Coffer/CofferError/Code/locked``. Default 5000.
    public var busyTimeout: Int
    /// How durable a commit is when ``SQLiteBackend/apply(_:)`` returns. Default ``Synchronous/full``.
    public var synchronous: Synchronous
    /// How many reader connections are kept open for queries, which run beside the one writer
    /// without waiting for it. More readers are opened when more queries run at once; only this
    /// many are kept. Default 4.
    public var readers: Int
    /// Whether every statement's shape and duration is logged at `info` to the backend's
    /// logger — never a value: values are bound parameters. For finding slow queries.
    /// Default `false`.
    public var logStatements: Bool

    /// A configuration; the defaults are durable and suit most apps.
    public init(
      busyTimeout: Int = 5000, synchronous: Synchronous = .full, readers: Int = 4, logStatements: Bool = false
    ) {
      self.busyTimeout = busyTimeout
      self.synchronous = synchronous
      self.readers = readers
      self.logStatements = logStatements
    }
  }
}
