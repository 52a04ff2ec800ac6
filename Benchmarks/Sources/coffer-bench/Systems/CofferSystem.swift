@_spi(Backend) import Coffer
import CofferStores
import Foundation

/// A Coffer backend reached the way an app reaches it: `Store.open(url:)` and the typed API. A
/// file store lives in the benchmark's scratch folder; a PostgreSQL store in a database of its
/// own on the benchmark's server, made anew for every new store.
final class CofferSystem: BenchSystem {
  let name: String
  let isDurable: Bool
  /// The scheme and options of the store URL, e.g. `"sqlite"`, `"?format=binary"`.
  private let scheme: String
  private let options: String
  /// The file or folder name the store takes in the benchmark's folder; empty for memory stores.
  private let file: String
  /// The name of the store's database on the PostgreSQL server, for a server store.
  private let databaseName: String?
  private var database: PostgresDatabase?
  private var store: Store?
  private var path = ""
  /// The URL the store was made with, to open it again.
  private var url = ""

  /// The row codec the store uses for `ChatMessage`: the one `@Storable` generates, or the
  /// one derived from `Codable`.
  private let codec: RowCodecChoice

  /// A system for `scheme:///FOLDER/file?options`, or `scheme:` when `file` is empty.
  init(
    name: String, scheme: String, file: String, options: String = "", durable: Bool,
    codec: RowCodecChoice = .generated
  ) {
    self.name = name + (codec == .codable ? " (Codable)" : "")
    self.codec = codec
    self.scheme = scheme
    self.file = file
    self.options = options
    self.isDurable = durable
    self.databaseName = nil
  }

  /// A system for the database `database` on the benchmark's PostgreSQL server, reached with
  /// the server's URL (whose scheme, `postgres` or `postgresql`, names the backend).
  init(name: String, database: String, codec: RowCodecChoice = .generated) {
    self.name = name + (codec == .codable ? " (Codable)" : "")
    self.codec = codec
    self.scheme = "postgres"
    self.file = ""
    self.options = ""
    self.isDurable = true
    self.databaseName = database
  }

  private var open: Store {
    get throws {
      guard let store else { throw BenchError("\(name): no store is open") }
      return store
    }
  }

  func create(in folder: String) async throws {
    try await close()
    path = file.isEmpty ? "" : folder + "/" + file
    var url = "\(scheme):" + (path.isEmpty ? "" : "//" + path) + options
    if let databaseName {
      let database = try PostgresDatabase(databaseName)
      try database.recreate()
      self.database = database
      url = database.url
    }
    self.url = url
    // The store picks its codec for a type when the type is prepared, and keeps it.
    store = try await RowCodecChoice.$current.withValue(codec) {
      let store = try await Store.open(url: url, registry: .makeBuiltIn())
      try await store.prepare([ChatMessage.self])
      return store
    }
  }

  func bulkInsert(_ messages: [ChatMessage]) async throws { try await open.insert(messages) }

  func get(_ id: Int64) async throws -> ChatMessage? { try await open.get(ChatMessage.self, id: id) }

  func threadPage(_ thread: Int64) async throws -> [ChatMessage] { try await Self.page(thread, in: open) }

  func scan() async throws -> [ChatMessage] { try await open.all(ChatMessage.self) }

  func update(_ messages: [ChatMessage]) async throws {
    try await open.batch { batch in for message in messages { try batch.update(message) } }
  }

  func commit(_ message: ChatMessage) async throws { try await open.update(message) }

  /// Child tasks sharing the one store, as the handlers of a server share it.
  func concurrentGets(_ ids: [Int64], tasks: Int, until deadline: ContinuousClock.Instant) async throws
    -> [GetTally]?
  {
    let store = try open
    return try await inTasks(tasks) { task in
      var tally = GetTally()
      for position in stride(from: task, to: ids.count, by: tasks) {
        if tally.done % 100 == 0 && ContinuousClock.now >= deadline { break }
        tally.threadSum &+= try await store.get(ChatMessage.self, id: ids[position])?.threadID ?? -1
        tally.done += 1
      }
      return tally
    }
  }

  /// The store's file or folder, plus an SQLite store's log files (absent for the others); for
  /// a PostgreSQL store, its database's tables and indexes.
  func fileSize() -> Int64 {
    if let database { return database.size() }
    return path.isEmpty ? 0 : sqliteSize(path)
  }

  func close() async throws {
    if let store { try await store.close() }
    store = nil
  }
}

extension CofferSystem: ReadWriteSystem {
  func readWhileWriting(_ plans: [ReadPlan], writes: [ChatMessage], until deadline: ContinuousClock.Instant)
    async throws -> ReadWriteTally
  {
    let store = try open
    return try await withThrowingTaskGroup(of: (Int, ReaderTally?, [Double]).self) { group in
      group.addTask {
        var seconds: [Double] = []
        guard !writes.isEmpty else { return (-1, nil, seconds) }
        let clock = ContinuousClock()
        var index = 0
        while clock.now < deadline {
          let start = clock.now
          try await store.update(writes[index])
          seconds.append(Measure.seconds(clock.now - start))
          index = (index + 1) % writes.count
        }
        return (-1, nil, seconds)
      }
      for (number, plan) in plans.enumerated() {
        group.addTask {
          var tally = ReaderTally()
          while !(tally.checksClock && ContinuousClock.now >= deadline) {
            let position = tally.calls % plan.ids.count
            if ReadPlan.isPage(tally.calls) {
              tally.count(page: try await Self.page(plan.threads[position], in: store))
            } else {
              tally.count(message: try await store.get(ChatMessage.self, id: plan.ids[position]))
            }
          }
          return (number, tally, [])
        }
      }
      var readers = [ReaderTally](repeating: ReaderTally(), count: plans.count)
      var commits: [Double] = []
      for try await (number, tally, seconds) in group {
        if let tally { readers[number] = tally } else { commits = seconds }
      }
      return ReadWriteTally(readers: readers, commits: commits)
    }
  }

  func reopen(readingThread thread: Int64) async throws -> [ChatMessage] {
    try await close()
    let store = try await RowCodecChoice.$current.withValue(codec) {
      let store = try await Store.open(url: url, registry: .makeBuiltIn())
      try await store.prepare([ChatMessage.self])
      return store
    }
    self.store = store
    return try await Self.page(thread, in: store)
  }

  /// The newest 50 messages of a thread: the suite's thread page.
  private static func page(_ thread: Int64, in store: Store) async throws -> [ChatMessage] {
    try await store.query(ChatMessage.self).filter(\.threadID == thread).sort(\.date, .descending)
      .limit(50).fetch()
  }
}
