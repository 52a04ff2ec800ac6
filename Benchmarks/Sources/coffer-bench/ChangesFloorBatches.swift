@_spi(Backend) import Coffer
import CofferStores
import Foundation
import RawLMDB
import RawPostgres
import RawSQLite

/// What any change feed written in the same transaction as its rows must add to the change
/// benchmark's two batch workloads — a bulk insert of 10,000 rows into an empty table and an
/// update of every tenth of them by id — measured on the raw C libraries beside what Coffer's
/// feed adds (issue 43's bulk and update goals). Each raw program runs the batch in one
/// transaction alone, and then with one more row in a second table holding the bytes Coffer's
/// feed records for that batch (its payload, hundreds of kilobytes for the bulk insert). Coffer's
/// figures are the same batch with the feed off and on. Each figure is the median of
/// `repetitions` batches, the four of an engine taking turns batch by batch.
enum ChangesFloorBatches {
  static let rows = 10_000
  static let workloads = ["bulk insert", "update 10%"]

  typealias Figure = ChangesFloorBenchmark.Figure

  /// The payload Coffer's feed records for a batch of `rows`, stored as new rows or over stored
  /// ones.
  static func payload(_ rows: [Row], existed: Bool) throws -> [UInt8] {
    var collector = ChangeCollector()
    for row in rows { collector.stored(row, in: ChangesBenchmark.schema, existed: existed) }
    guard let payload = collector.encoded() else { throw BenchError("the collector recorded nothing") }
    return payload
  }

  /// The ids the update changes: every tenth.
  static var updatedIDs: StrideTo<Int64> { stride(from: 0, to: Int64(rows), by: 10) }

  static func updatedRows(_ version: Int64) -> [Row] {
    updatedIDs.map { ChangesBenchmark.row($0, version: version) }
  }

  /// The medians of both workloads on one engine.
  static func measure(_ engine: String, repetitions: Int) async throws -> [Figure] {
    let folder = try ScratchFolder("changes-floor-batches-\(engine)")
    defer { folder.remove() }
    let programs: [any RawBatchProgram]
    switch engine {
    case "sqlite": programs = [false, true].map { RawSQLiteBatches(folder: folder, tag: $0 ? "on" : "off") }
    case "lmdb": programs = [false, true].map { RawLMDBBatches(folder: folder, tag: $0 ? "on" : "off") }
    case "postgres": programs = try [false, true].map { try RawPostgresBatches(tag: $0 ? "on" : "off") }
    default:
      throw UsageError(
        message: "\(ChangesFloorBenchmark.flag) measures sqlite, lmdb and postgres, not \(engine)")
    }
    defer { for program in programs { program.close() } }
    let clock = ContinuousClock()
    let source = RowSource(count: rows) { ChangesBenchmark.row(Int64($0)) }
    let bulkPayload = try payload((0..<Int64(rows)).map { ChangesBenchmark.row($0) }, existed: false)
    var samples: [[Duration]] = Array(repeating: [], count: 8)
    func timed(_ index: Int, _ body: () async throws -> Void) async throws {
      let start = clock.now
      try await body()
      samples[index].append(clock.now - start)
    }
    var round = 0
    func fresh(_ feed: Bool) async throws -> Store {
      round += 1
      let store = try await Store.open(
        url: try ChangesBenchmark.url(engine, feed: feed, name: "floor-\(feed)-\(round)", folder: folder),
        registry: .makeBuiltIn())
      try await store.prepare(schemas: [ChangesBenchmark.schema])
      return store
    }
    // Which of the two goes first alternates, so that the machine's drift falls on both alike.
    func turns(_ turn: Int) -> [Bool] { turn.isMultiple(of: 2) ? [false, true] : [true, false] }
    for repetition in 0..<repetitions {
      for feed in turns(repetition) {
        let program = programs[feed ? 1 : 0]
        try program.empty()
        try await timed(feed ? 1 : 0) { try program.insert(rows: rows, change: feed ? bulkPayload : nil) }
      }
      for feed in turns(repetition) {
        let store = try await fresh(feed)
        try await timed(feed ? 3 : 2) {
          try await store.apply(ChangeSet([.insertMany(entity: ChangesBenchmark.schema.name, rows: source)]))
        }
        try await store.close()
      }
    }
    var full: [Store] = []
    for feed in [false, true] {
      try programs[feed ? 1 : 0].empty()
      try programs[feed ? 1 : 0].insert(rows: rows, change: nil)
      let store = try await fresh(feed)
      try await store.apply(ChangeSet([.insertMany(entity: ChangesBenchmark.schema.name, rows: source)]))
      full.append(store)
    }
    var updatePayload = 0
    for version in Int64(1)...Int64(repetitions) {
      let updated = updatedRows(version)
      let change = try payload(updated, existed: true)
      updatePayload = change.count
      let batch = ChangeSet(updated.map { .update(entity: ChangesBenchmark.schema.name, row: $0) })
      for feed in turns(Int(version)) {
        let program = programs[feed ? 1 : 0]
        try await timed(feed ? 5 : 4) { try program.update(version: version, change: feed ? change : nil) }
      }
      for feed in turns(Int(version)) {
        let store = full[feed ? 1 : 0]
        try await timed(feed ? 7 : 6) { try await store.apply(batch) }
      }
    }
    for store in full { try await store.close() }
    let medians = samples.map(Measure.median)
    let load = loadAverage()
    return [(0, bulkPayload.count), (1, updatePayload)].map { index, payload in
      Figure(
        engine: engine, workload: workloads[index], rawOff: medians[4 * index], rawOn: medians[4 * index + 1],
        cofferOff: medians[4 * index + 2], cofferOn: medians[4 * index + 3], payload: payload, load: load)
    }
  }

  static func report(_ figures: [Figure]) -> [String] {
    var lines = [
      "| backend | workload | payload | raw alone | raw with a change row | raw ratio | Coffer feed off | Coffer feed on | Coffer ratio | goal | load |",
      "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for figure in figures {
      let raw = Measure.seconds(figure.rawOn) / Measure.seconds(figure.rawOff)
      let coffer = Measure.seconds(figure.cofferOn) / Measure.seconds(figure.cofferOff)
      let goal =
        coffer <= 1.25
        ? "≤ 1.25x: met" : raw > 1.25 ? "≤ 1.25x: not met, below the raw floor" : "≤ 1.25x: **not met**"
      lines.append(
        "| \(figure.engine) | \(figure.workload) | \(figure.payload.formatted()) B | "
          + "\(ChangesBenchmark.time(figure.rawOff)) | \(ChangesBenchmark.time(figure.rawOn)) | "
          + String(format: "%.2fx", raw) + " | \(ChangesBenchmark.time(figure.cofferOff)) | "
          + "\(ChangesBenchmark.time(figure.cofferOn)) | " + String(format: "%.2fx", coffer) + " | \(goal) | "
          + ChangesBenchmark.loadText(figure.load) + " |")
    }
    return lines
  }
}

/// A raw C program's batch workloads on the change benchmark's schema (id, kind, amount, note, an
/// index on kind), each in one durable transaction, writing `change` into a second table in the
/// same transaction when given.
protocol RawBatchProgram: AnyObject {
  /// Starts again from an empty table (not timed).
  func empty() throws
  /// Inserts rows 0..<rows in one transaction.
  func insert(rows: Int, change: [UInt8]?) throws
  /// Rewrites every tenth row by id, as `version`, in one transaction.
  func update(version: Int64, change: [UInt8]?) throws
  func close()
}

final class RawSQLiteBatches: RawBatchProgram {
  let folder: ScratchFolder
  let tag: String
  var connection: RawSQLiteConnection?
  var files = 0

  init(folder: ScratchFolder, tag: String) { (self.folder, self.tag) = (folder, tag) }

  func empty() throws {
    connection?.close()
    files += 1
    let opened = try RawSQLiteConnection(path: folder.file("raw-batches-\(tag)-\(files).sqlite"))
    try opened.execute(
      """
      CREATE TABLE items (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, amount INTEGER NOT NULL, note TEXT NOT NULL);
      CREATE INDEX items_kind ON items (kind);
      CREATE TABLE changes (sequence INTEGER PRIMARY KEY, committed_at INTEGER NOT NULL, payload BLOB NOT NULL);
      """)
    connection = opened
  }

  func open() throws -> RawSQLiteConnection {
    guard let connection else { throw BenchError("raw SQLite: no table yet") }
    return connection
  }

  func insert(rows: Int, change: [UInt8]?) throws {
    try write("INSERT INTO items VALUES (?1, ?2, ?3, ?4)", ids: 0..<Int64(rows), version: 0, change: change)
  }

  func update(version: Int64, change: [UInt8]?) throws {
    try write(
      "UPDATE items SET kind = ?2, amount = ?3, note = ?4 WHERE id = ?1", ids: ChangesFloorBatches.updatedIDs,
      version: version, change: change)
  }

  private func write(_ sql: String, ids: some Sequence<Int64>, version: Int64, change: [UInt8]?) throws {
    let connection = try open()
    let statement = try connection.statement(sql)
    try connection.execute("BEGIN IMMEDIATE")
    for id in ids {
      sqlite3_bind_int64(statement, 1, id)
      try ChangesFloorBenchmark.bindText(statement, 2, ChangesFloorBenchmark.kind(id))
      sqlite3_bind_int64(statement, 3, id &* 31 &+ version)
      try ChangesFloorBenchmark.bindText(statement, 4, "event \(id) v\(version)")
      guard try !connection.step(statement) else { throw connection.failure() }
      sqlite3_reset(statement)
    }
    if let change {
      let record = try connection.statement("INSERT INTO changes (committed_at, payload) VALUES (?1, ?2)")
      sqlite3_bind_int64(record, 1, Int64(Date().timeIntervalSince1970 * 1_000_000))
      _ = change.withUnsafeBytes { sqlite3_bind_blob(record, 2, $0.baseAddress, Int32($0.count), nil) }
      guard try !connection.step(record) else { throw connection.failure() }
      sqlite3_reset(record)
    }
    try connection.execute("COMMIT")
  }

  func close() { connection?.close() }
}

final class RawLMDBBatches: RawBatchProgram {
  let folder: ScratchFolder
  let tag: String
  var environment: OpaquePointer?
  var items: MDB_dbi = 0
  var byKind: MDB_dbi = 0
  var changes: MDB_dbi = 0
  var directories = 0
  var sequence: UInt64 = 0

  init(folder: ScratchFolder, tag: String) { (self.folder, self.tag) = (folder, tag) }

  func empty() throws {
    close()
    directories += 1
    let path = folder.file("raw-batches-\(tag)-\(directories)-lmdb")
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    var opened: OpaquePointer?
    try checkLMDB(mdb_env_create(&opened), "mdb_env_create")
    environment = opened
    try checkLMDB(mdb_env_set_maxdbs(opened, 4), "mdb_env_set_maxdbs")
    try checkLMDB(mdb_env_set_mapsize(opened, 1 << 30), "mdb_env_set_mapsize")
    try checkLMDB(mdb_env_open(opened, path, UInt32(MDB_NOTLS), 0o644), "mdb_env_open")
    try RawLMDBTransactions.writing(in: opened) { transaction in
      try checkLMDB(mdb_dbi_open(transaction, "items", UInt32(MDB_CREATE), &items), "mdb_dbi_open")
      try checkLMDB(
        mdb_dbi_open(transaction, "items.kind", UInt32(MDB_CREATE | MDB_DUPSORT), &byKind), "mdb_dbi_open")
      try checkLMDB(mdb_dbi_open(transaction, "changes", UInt32(MDB_CREATE), &changes), "mdb_dbi_open")
    }
  }

  func insert(rows: Int, change: [UInt8]?) throws {
    try RawLMDBTransactions.writing(in: environment) { transaction in
      for id in 0..<Int64(rows) { try put(transaction, id, version: 0, index: true) }
      try record(change, in: transaction)
    }
  }

  func update(version: Int64, change: [UInt8]?) throws {
    try RawLMDBTransactions.writing(in: environment) { transaction in
      // The kind stays as it was: the index holds.
      for id in ChangesFloorBatches.updatedIDs { try put(transaction, id, version: version, index: false) }
      try record(change, in: transaction)
    }
  }

  private func put(_ transaction: OpaquePointer?, _ id: Int64, version: Int64, index: Bool) throws {
    var key = withUnsafeBytes(of: UInt64(bitPattern: id).bigEndian) { Array($0) }
    let kind = ChangesFloorBenchmark.kind(id)
    var value = Array("\(kind)|\(id &* 31 &+ version)|event \(id) v\(version)".utf8)
    var kindKey = Array(kind.utf8)
    try key.withUnsafeMutableBytes { keyBytes in
      var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
      try value.withUnsafeMutableBytes { valueBytes in
        var dataValue = MDB_val(mv_size: valueBytes.count, mv_data: valueBytes.baseAddress)
        try checkLMDB(mdb_put(transaction, items, &keyValue, &dataValue, 0), "mdb_put")
      }
      guard index else { return }
      try kindKey.withUnsafeMutableBytes { kindBytes in
        var kindValue = MDB_val(mv_size: kindBytes.count, mv_data: kindBytes.baseAddress)
        try checkLMDB(mdb_put(transaction, byKind, &kindValue, &keyValue, 0), "mdb_put")
      }
    }
  }

  private func record(_ change: [UInt8]?, in transaction: OpaquePointer?) throws {
    guard var change else { return }
    sequence += 1
    try ChangesFloorBenchmark.appendRawChange(&change, number: sequence, to: changes, in: transaction)
  }

  func close() {
    if let environment { mdb_env_close(environment) }
    environment = nil
  }
}

final class RawPostgresBatches: RawBatchProgram {
  let connection: PQConnection
  let tag: String

  init(tag: String) throws {
    self.tag = tag
    connection = try PQConnection(try PostgresDatabase.fresh("coffer_bench_changes_floor_batches_\(tag)"))
    // The payload stored as Coffer's feed stores it: LZ4 where the server has it, else as it is.
    let lz4 =
      try connection.scalar(
        "SELECT coalesce(bool_or('lz4' = ANY(enumvals)), false) FROM pg_settings "
          + "WHERE name = 'default_toast_compression'") == "t"
    try connection.execute(
      """
      CREATE TABLE changes (sequence bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        committed_at timestamptz NOT NULL, payload bytea \(lz4 ? "COMPRESSION lz4 " : "")NOT NULL);
      ALTER TABLE changes ALTER COLUMN payload SET STORAGE \(lz4 ? "EXTENDED" : "EXTERNAL");
      """)
    try connection.prepare("record", "INSERT INTO changes (committed_at, payload) VALUES (now(), $1)")
  }

  func empty() throws {
    try connection.execute(
      """
      DROP TABLE IF EXISTS items;
      CREATE TABLE items (id bigint PRIMARY KEY, kind text COLLATE "C" NOT NULL, amount bigint NOT NULL,
        note text COLLATE "C" NOT NULL);
      CREATE INDEX items_kind ON items (kind);
      """)
    for (name, sql) in [("update-alone", Self.update), ("update-recorded", Self.recordedUpdate)] {
      try? connection.execute("DEALLOCATE \"\(name)\"")
      try connection.prepare(name, sql)
    }
  }

  static let update =
    "UPDATE items SET kind = u.kind, amount = u.amount, note = u.note "
    + "FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[]) AS u(id, kind, amount, note) "
    + "WHERE items.id = u.id"
  static let recordedUpdate =
    "WITH item AS (\(update) RETURNING 1) INSERT INTO changes (committed_at, payload) "
    + "SELECT now(), $5 FROM (SELECT 1 FROM item LIMIT 1) AS written"

  /// The rows go in by binary `COPY`, libpq's fastest way in; with a change, in a transaction
  /// that also inserts it.
  func insert(rows: Int, change: [UInt8]?) throws {
    if change != nil { try connection.execute("BEGIN") }
    var next: Int64 = 0
    var headerSent = false
    try connection.copy("COPY items (id, kind, amount, note) FROM STDIN (FORMAT binary)") { buffer in
      if !headerSent {
        buffer.append(contentsOf: PostgresBinary.copyHeader)
        headerSent = true
      }
      guard next < Int64(rows) else {
        buffer.append(contentsOf: PostgresBinary.copyTrailer)
        return false
      }
      let id = next
      next += 1
      PostgresBinary.append(Int16(4), to: &buffer)
      PostgresBinary.appendField(id, to: &buffer)
      PostgresBinary.appendField(ChangesFloorBenchmark.kind(id), to: &buffer)
      PostgresBinary.appendField(id &* 31, to: &buffer)
      PostgresBinary.appendField("event \(id) v0", to: &buffer)
      return true
    }
    guard let change else { return }
    var parameters = PQParameters(capacity: change.count + 64)
    parameters.append { $0.append(contentsOf: change) }
    _ = try connection.run("record", parameters)
    try connection.execute("COMMIT")
  }

  /// One statement over arrays of the rows' values; with a change, the same statement inserts it.
  func update(version: Int64, change: [UInt8]?) throws {
    let name = "update-\(change == nil ? "alone" : "recorded")"
    let ids = Array(ChangesFloorBatches.updatedIDs)
    var parameters = PQParameters(capacity: ids.count * 48 + (change?.count ?? 0))
    func array(_ type: PostgresBinary.TypeID, _ element: @escaping (Int64, inout [UInt8]) -> Void) {
      parameters.append { bytes in
        PostgresBinary.appendArray(of: type, count: ids.count, to: &bytes) { bytes in
          for id in ids { element(id, &bytes) }
        }
      }
    }
    array(.int8) { PostgresBinary.appendField($0, to: &$1) }
    array(.text) { PostgresBinary.appendField(ChangesFloorBenchmark.kind($0), to: &$1) }
    array(.int8) { PostgresBinary.appendField($0 &* 31 &+ version, to: &$1) }
    array(.text) { PostgresBinary.appendField("event \($0) v\(version)", to: &$1) }
    if let change { parameters.append { $0.append(contentsOf: change) } }
    let result = try connection.run(name, parameters)
    guard result.changed == (change == nil ? ids.count : 1) else {
      throw BenchError("raw libpq: the update changed \(result.changed) rows")
    }
  }

  func close() {}
}
