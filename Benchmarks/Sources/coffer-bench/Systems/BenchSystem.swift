import Foundation

/// One system under test: a Coffer backend, or what it is measured against (raw C, GRDB, a
/// Dictionary). Every system does the same work on the same messages and hands back
/// `ChatMessage` values, so each operation includes decoding, as an app would need.
protocol BenchSystem: AnyObject {
  /// The name in tables: "Coffer sqlite", "raw C libsqlite3".
  var name: String { get }
  /// Whether single-row commits are durable (a memory store's are not, and are not measured).
  var isDurable: Bool { get }

  /// Creates a new, empty store in `folder`, closing any previous one.
  func create(in folder: String) async throws
  /// Inserts every message in one batch (one transaction).
  func bulkInsert(_ messages: [ChatMessage]) async throws
  /// One point lookup by id, in its own read transaction.
  func get(_ id: Int64) async throws -> ChatMessage?
  /// The newest 50 messages of a thread, newest first.
  func threadPage(_ thread: Int64) async throws -> [ChatMessage]
  /// Every message, decoded.
  func scan() async throws -> [ChatMessage]
  /// Replaces the given messages (which exist) in one batch.
  func update(_ messages: [ChatMessage]) async throws
  /// Replaces one message in its own durable transaction.
  func commit(_ message: ChatMessage) async throws
  /// Point gets from `tasks` tasks (or threads) at once, each on a connection of its own where
  /// the system has connections: task `k` gets `ids[k]`, `ids[k + tasks]`, … in that order until
  /// it has done them all or `deadline` has passed. Returns each task's tally, in task order;
  /// nil when the system does not take part (the default).
  func concurrentGets(_ ids: [Int64], tasks: Int, until deadline: ContinuousClock.Instant) async throws
    -> [GetTally]?
  /// Bytes the store occupies on disk (0 for a memory store).
  func fileSize() -> Int64
  /// Closes the store.
  func close() async throws
}

extension BenchSystem {
  /// Not measured: the system leaves the concurrent gets out.
  func concurrentGets(_ ids: [Int64], tasks: Int, until deadline: ContinuousClock.Instant) async throws
    -> [GetTally]?
  { nil }
}

/// The size of a file, or of every file under a folder.
func diskUsage(_ path: String) -> Int64 {
  let manager = FileManager.default
  var isDirectory: ObjCBool = false
  guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { return 0 }
  guard isDirectory.boolValue else {
    return (try? manager.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0
  }
  let children = (try? manager.contentsOfDirectory(atPath: path)) ?? []
  return children.reduce(0) { $0 + diskUsage(path + "/" + $1) }
}

/// The size of an SQLite database with the log and shared-memory files beside it.
func sqliteSize(_ path: String) -> Int64 {
  diskUsage(path) + diskUsage(path + "-wal") + diskUsage(path + "-shm")
}

/// Raised when a C library reports an error; the benchmark stops with its message.
struct BenchError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
