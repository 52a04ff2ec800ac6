@_spi(Backend) import Coffer
import CofferStores
import Foundation
import RawLMDB
import RawPostgres
import RawSQLite

/// What any change feed written in the same transaction as its rows must add to a one-row
/// durable commit, measured on the raw C libraries beside what Coffer's feed adds (issue 43's
/// single-commit goal); then the same for the change benchmark's bulk insert and update of 10%
/// (``ChangesFloorBatches``). Each engine's raw program commits one row into a table of 10,000 (the
/// change benchmark's schema: id, kind, amount, note, an index on kind), alone and then with the
/// least a feed can write with it — one more row holding the change, a payload as long as the
/// one Coffer records for that row, in a second table (SQLite: `INTEGER PRIMARY KEY`; LMDB: a
/// second database; PostgreSQL: an identity column, the two inserts one statement). Coffer's
/// figures are the same one-row commit with the feed off and on. Each figure is the median of
/// `--repetitions` × 100 commits (default 11), the four interleaved commit by commit; each batch
/// figure the median of `--repetitions` batches.
///
/// `coffer-bench --changes-floor [--repetitions N] [--changes-engines sqlite,lmdb,postgres]
/// [--postgres-url URL] [--output DIR] [--no-write]`
enum ChangesFloorBenchmark {
  static let flag = "--changes-floor"
  static let rows = 10_000

  /// One backend's four timings of one workload: the raw library alone and with a change row,
  /// Coffer with the feed off and on.
  struct Figure {
    var engine: String
    var workload = "single commit"
    var rawOff: Duration
    var rawOn: Duration
    var cofferOff: Duration
    var cofferOn: Duration
    var payload: Int
    var load: Double?
  }

  static func run(_ arguments: [String]) async throws {
    let options = try WorkloadArguments(
      arguments, flag: flag, enginesOption: "--changes-engines", repetitions: 11,
      engines: ["sqlite", "lmdb"]
    ) { _, _ in false }
    let rounds = options.repetitions * 100
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    let payload = try payloadSize()
    say(
      "coffer-bench: one-row durable commits, raw with and without a change row, Coffer with the feed off and on"
    )
    var figures: [Figure] = []
    var batches: [Figure] = []
    // PostgreSQL only when a server is named.
    for engine in options.engines where engine != "postgres" || PostgresServer.url != nil {
      let figure = try await measure(engine, rounds: rounds, payload: payload)
      say(
        "\(engine): raw \(ChangesBenchmark.time(figure.rawOff)) → \(ChangesBenchmark.time(figure.rawOn)), "
          + "Coffer \(ChangesBenchmark.time(figure.cofferOff)) → \(ChangesBenchmark.time(figure.cofferOn))")
      figures.append(figure)
      for batch in try await ChangesFloorBatches.measure(engine, repetitions: options.repetitions) {
        say(
          "\(engine), \(batch.workload): raw \(ChangesBenchmark.time(batch.rawOff)) → "
            + "\(ChangesBenchmark.time(batch.rawOn)), Coffer \(ChangesBenchmark.time(batch.cofferOff)) → "
            + ChangesBenchmark.time(batch.cofferOn))
        batches.append(batch)
      }
    }
    let text = report(
      figures, batches, rounds: rounds, repetitions: options.repetitions, command: command,
      load: load.finish()
    ).joined(separator: "\n")
    print(text)
    if options.write { try writeReport(text, named: "ChangeFeedFloor.md", to: options.output) }
  }

  /// How many bytes Coffer's feed records for one inserted row of the benchmark's schema.
  static func payloadSize() throws -> Int {
    var collector = ChangeCollector()
    collector.stored(ChangesBenchmark.row(Int64(rows)), in: ChangesBenchmark.schema, existed: false)
    guard let payload = collector.encoded() else { throw BenchError("the collector recorded nothing") }
    return payload.count
  }

  static func note(_ id: Int64) -> String { "event \(id) v0" }
  static func kind(_ id: Int64) -> String { "kind \(id % 7)" }

  /// A raw program's one-row commit, and how to let go of what it holds.
  struct RawCommitter {
    var close: () -> Void
    var commit: (Int64) throws -> Void
  }

  /// A Coffer store of the benchmark's schema holding `rows` rows, the feed off or on.
  static func cofferStore(_ engine: String, feed: Bool, folder: ScratchFolder) async throws -> Store {
    var url = try folder.storeURL(
      engine, named: "coffer-\(feed)", database: "coffer_bench_changes_floor_coffer_\(feed ? "on" : "off")")
    if feed { url += (url.contains("?") ? "&" : "?") + "changes=on" }
    let store = try await Store.open(url: url, registry: .makeBuiltIn())
    try await store.prepare(schemas: [ChangesBenchmark.schema])
    try await store.apply(
      ChangeSet([
        .insertMany(
          entity: ChangesBenchmark.schema.name,
          rows: RowSource(count: rows) { ChangesBenchmark.row(Int64($0)) })
      ]))
    return store
  }

  /// The four medians of one engine, its commits interleaved round by round.
  static func measure(_ engine: String, rounds: Int, payload: Int) async throws -> Figure {
    let folder = try ScratchFolder("changes-floor-\(engine)")
    defer { folder.remove() }
    let raws: [RawCommitter]
    switch engine {
    case "sqlite": raws = try [false, true].map { try rawSQLite(feed: $0, payload: payload, folder: folder) }
    case "lmdb": raws = try [false, true].map { try rawLMDB(feed: $0, payload: payload, folder: folder) }
    case "postgres": raws = try [false, true].map { try rawPostgres(feed: $0, payload: payload) }
    default: throw UsageError(message: "\(flag) measures sqlite, lmdb and postgres, not \(engine)")
    }
    defer { for raw in raws { raw.close() } }
    let off = try await cofferStore(engine, feed: false, folder: folder)
    let on = try await cofferStore(engine, feed: true, folder: folder)
    let clock = ContinuousClock()
    var samples: [[Duration]] = Array(repeating: [], count: 4)
    for round in 0..<rounds {
      let id = Int64(rows + round)
      for (index, raw) in raws.enumerated() {
        let start = clock.now
        try raw.commit(id)
        samples[index].append(clock.now - start)
      }
      for (index, store) in [off, on].enumerated() {
        let row = ChangesBenchmark.row(id)
        let start = clock.now
        try await store.apply(ChangeSet([.insert(entity: ChangesBenchmark.schema.name, row: row)]))
        samples[2 + index].append(clock.now - start)
      }
    }
    try await off.close()
    try await on.close()
    let medians = samples.map(Measure.median)
    return Figure(
      engine: engine, rawOff: medians[0], rawOn: medians[1], cofferOff: medians[2], cofferOn: medians[3],
      payload: payload, load: loadAverage())
  }

  static func rawSQLite(feed: Bool, payload: Int, folder: ScratchFolder) throws -> RawCommitter {
    let connection = try RawSQLiteConnection(path: folder.file("raw-\(feed).sqlite"))
    try connection.execute(
      """
      CREATE TABLE items (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, amount INTEGER NOT NULL, note TEXT NOT NULL);
      CREATE INDEX items_kind ON items (kind);
      CREATE TABLE changes (sequence INTEGER PRIMARY KEY, committed_at INTEGER NOT NULL, payload BLOB NOT NULL);
      WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows - 1))
        INSERT INTO items SELECT i, 'kind ' || (i % 7), i * 31, 'event ' || i || ' v0' FROM n;
      """)
    let insert = try connection.statement("INSERT INTO items VALUES (?1, ?2, ?3, ?4)")
    let record = try connection.statement("INSERT INTO changes (committed_at, payload) VALUES (?1, ?2)")
    let bytes = [UInt8](repeating: 7, count: payload)
    return RawCommitter(close: { connection.close() }) { id in
      try connection.execute("BEGIN IMMEDIATE")
      sqlite3_bind_int64(insert, 1, id)
      try bindText(insert, 2, kind(id))
      sqlite3_bind_int64(insert, 3, id &* 31)
      try bindText(insert, 4, note(id))
      guard try !connection.step(insert) else { throw connection.failure() }
      sqlite3_reset(insert)
      if feed {
        sqlite3_bind_int64(record, 1, Int64(Date().timeIntervalSince1970 * 1_000_000))
        _ = bytes.withUnsafeBytes { sqlite3_bind_blob(record, 2, $0.baseAddress, Int32($0.count), nil) }
        guard try !connection.step(record) else { throw connection.failure() }
        sqlite3_reset(record)
      }
      try connection.execute("COMMIT")
    }
  }

  static func bindText(_ statement: OpaquePointer, _ index: Int32, _ text: String) throws {
    var text = text
    text.withUTF8 { utf8 in
      _ = utf8.withMemoryRebound(to: CChar.self) {
        // SQLITE_TRANSIENT: SQLite copies the text before this returns.
        sqlite3_bind_text(
          statement, index, $0.baseAddress, Int32($0.count),
          unsafeBitCast(-1, to: sqlite3_destructor_type.self))
      }
    }
  }

  static func rawLMDB(feed: Bool, payload: Int, folder: ScratchFolder) throws -> RawCommitter {
    let path = folder.file("raw-\(feed)-lmdb")
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    var environment: OpaquePointer?
    try checkLMDB(mdb_env_create(&environment), "mdb_env_create")
    try checkLMDB(mdb_env_set_maxdbs(environment, 4), "mdb_env_set_maxdbs")
    try checkLMDB(mdb_env_set_mapsize(environment, 1 << 30), "mdb_env_set_mapsize")
    try checkLMDB(mdb_env_open(environment, path, UInt32(MDB_NOTLS), 0o644), "mdb_env_open")
    var items: MDB_dbi = 0
    var byKind: MDB_dbi = 0
    var changes: MDB_dbi = 0
    func put(_ transaction: OpaquePointer?, _ id: Int64) throws {
      var key = withUnsafeBytes(of: UInt64(bitPattern: id).bigEndian) { Array($0) }
      var value = Array("\(kind(id))|\(id &* 31)|\(note(id))".utf8)
      var kindKey = Array(kind(id).utf8)
      try key.withUnsafeMutableBytes { keyBytes in
        var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
        try value.withUnsafeMutableBytes { valueBytes in
          var dataValue = MDB_val(mv_size: valueBytes.count, mv_data: valueBytes.baseAddress)
          try checkLMDB(mdb_put(transaction, items, &keyValue, &dataValue, 0), "mdb_put")
        }
        try kindKey.withUnsafeMutableBytes { kindBytes in
          var kindValue = MDB_val(mv_size: kindBytes.count, mv_data: kindBytes.baseAddress)
          try checkLMDB(mdb_put(transaction, byKind, &kindValue, &keyValue, 0), "mdb_put")
        }
      }
    }
    try RawLMDBTransactions.writing(in: environment) { transaction in
      try checkLMDB(mdb_dbi_open(transaction, "items", UInt32(MDB_CREATE), &items), "mdb_dbi_open")
      try checkLMDB(
        mdb_dbi_open(transaction, "items.kind", UInt32(MDB_CREATE | MDB_DUPSORT), &byKind), "mdb_dbi_open")
      try checkLMDB(mdb_dbi_open(transaction, "changes", UInt32(MDB_CREATE), &changes), "mdb_dbi_open")
      for id in 0..<Int64(rows) { try put(transaction, id) }
    }
    var sequence: UInt64 = 0
    var bytes = [UInt8](repeating: 7, count: payload)
    let opened = environment
    return RawCommitter(close: { mdb_env_close(opened) }) { id in
      try RawLMDBTransactions.writing(in: environment) { transaction in
        try put(transaction, id)
        guard feed else { return }
        sequence += 1
        try appendRawChange(&bytes, number: sequence, to: changes, in: transaction)
      }
    }
  }

  static func rawPostgres(feed: Bool, payload: Int) throws -> RawCommitter {
    let connection = try PQConnection(
      try PostgresDatabase.fresh("coffer_bench_changes_floor_\(feed ? "on" : "off")"))
    try connection.execute(
      """
      CREATE TABLE items (id bigint PRIMARY KEY, kind text COLLATE "C" NOT NULL, amount bigint NOT NULL,
        note text COLLATE "C" NOT NULL);
      CREATE INDEX items_kind ON items (kind);
      CREATE TABLE changes (sequence bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        committed_at timestamptz NOT NULL, payload bytea NOT NULL);
      INSERT INTO items SELECT n, 'kind ' || (n % 7), n * 31, 'event ' || n || ' v0'
        FROM generate_series(0, \(rows - 1)) AS n;
      ANALYZE items;
      """)
    let insert = "INSERT INTO items VALUES ($1, $2, $3, $4)"
    try connection.prepare(
      "commit",
      feed
        ? "WITH item AS (\(insert) RETURNING 1) INSERT INTO changes (committed_at, payload) SELECT now(), $5 FROM item"
        : insert)
    let bytes = [UInt8](repeating: 7, count: payload)
    return RawCommitter(close: {}) { id in
      var parameters = PQParameters(capacity: 64 + payload)
      parameters.append { PostgresBinary.append(id, to: &$0) }
      parameters.append { $0.append(contentsOf: kind(id).utf8) }
      parameters.append { PostgresBinary.append(id &* 31, to: &$0) }
      parameters.append { $0.append(contentsOf: note(id).utf8) }
      if feed { parameters.append { $0.append(contentsOf: bytes) } }
      let result = try connection.run("commit", parameters)
      guard result.changed == 1 else {
        throw BenchError("raw libpq: the commit changed \(result.changed) rows")
      }
    }
  }

  /// Appends `payload` to the raw feed database `changes` under `number` (big-endian, so keys
  /// sort in commit order), as the least a feed kept in LMDB writes beside a commit.
  static func appendRawChange(
    _ payload: inout [UInt8], number: UInt64, to changes: MDB_dbi, in transaction: OpaquePointer?
  ) throws {
    var key = withUnsafeBytes(of: number.bigEndian) { Array($0) }
    try key.withUnsafeMutableBytes { keyBytes in
      var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
      try payload.withUnsafeMutableBytes { valueBytes in
        var dataValue = MDB_val(mv_size: valueBytes.count, mv_data: valueBytes.baseAddress)
        try checkLMDB(mdb_put(transaction, changes, &keyValue, &dataValue, UInt32(MDB_APPEND)), "mdb_put")
      }
    }
  }

  static func report(
    _ figures: [Figure], _ batches: [Figure], rounds: Int, repetitions: Int,
    command: String,
    load: MachineLoad.Result
  ) -> [String] {
    var lines = [
      "# What a change feed must add to a commit",
      "",
      "Written by `\(command)`. First, a one-row durable commit into a table of \(rows.formatted()) rows, each figure the "
        + "median of \(rounds) commits, the four of a backend interleaved commit by commit. Raw: the engine's C library committing the row alone, then with the least "
        + "a feed kept in the same transaction can write beside it — one more row, in a second table, holding a "
        + "payload as long as the one Coffer records for that row (\(figures.first?.payload ?? 0) bytes). Coffer: "
        + "the same commit with the feed off and on (`?changes=on`). SQLite in WAL with `synchronous = FULL`, every "
        + "LMDB commit synced, PostgreSQL with fsync on. \(load.sentence) Machine: \(machineDescription()).",
      "",
      "| backend | raw alone | raw with a change row | raw ratio | Coffer feed off | Coffer feed on | Coffer ratio | load |",
      "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for figure in figures {
      let raw = Measure.seconds(figure.rawOn) / Measure.seconds(figure.rawOff)
      let coffer = Measure.seconds(figure.cofferOn) / Measure.seconds(figure.cofferOff)
      lines.append(
        "| \(figure.engine) | \(ChangesBenchmark.time(figure.rawOff)) | \(ChangesBenchmark.time(figure.rawOn)) | "
          + String(format: "%.2fx", raw) + " | \(ChangesBenchmark.time(figure.cofferOff)) | "
          + "\(ChangesBenchmark.time(figure.cofferOn)) | " + String(format: "%.2fx", coffer) + " | "
          + ChangesBenchmark.loadText(figure.load) + " |")
    }
    lines += [
      "",
      "Then the change benchmark's two batches, each in one durable transaction: a bulk insert of "
        + "\(ChangesFloorBatches.rows.formatted()) rows into an empty table, and an update of every tenth of them "
        + "by id; each figure the median of \(repetitions) batches, the four of a backend taking turns batch by "
        + "batch. Raw: the C library running the batch alone, then with one more row in a second table holding "
        + "the payload Coffer records for that batch (its length in the payload column; PostgreSQL stores it as "
        + "Coffer does, LZ4-compressed where the server has LZ4, else uncompressed). The raw ratio is what a feed "
        + "written in the same transaction cannot go below; a goal missed with a raw ratio above it is bounded by "
        + "that floor.",
      "",
    ]
    lines += ChangesFloorBatches.report(batches)
    lines.append("")
    return lines
  }
}
