@_spi(Backend) import Coffer
import CofferStores
import Foundation
import RawPostgres

/// Updating 10% of the rows of an entity with a unique index on PostgreSQL (issue 41), beside
/// raw libpq: `--unique-update-rows` orders (default 100,000; id, a unique order number, a
/// customer, an amount and a status), every tenth one's amount and status changed in one batch.
/// Coffer applies the batch through `Store.apply`; raw libpq runs the one statement the
/// PostgreSQL article says such a run becomes — `UPDATE … FROM unnest(…)` over arrays of the new
/// values, binary parameters, prepared once — on a table made as the backend makes it. Each
/// figure is the median of `--repetitions` (default 5) updates, the two systems interleaved;
/// the goal is the one Docs/Performance.md sets the PostgreSQL backend's update of 10%: within
/// 1.5x of raw libpq.
///
/// `coffer-bench --unique-updates --postgres-url URL [--unique-update-rows N] [--repetitions N]
/// [--output DIR] [--no-write]`
enum UniqueUpdateBenchmark {
  static let flag = "--unique-updates"
  static let goal = 1.5

  static let schema = try? EntitySchema(
    name: "Order",
    fields: [
      Field("id", .int), Field("number", .string), Field("customer", .string), Field("amount", .int),
      Field("status", .string),
    ],
    idField: "id", indexes: [.unique("number")])

  static func row(_ id: Int64, version: Int64) -> Row {
    Row([
      .int(id), .string("ORD-\(id)"), .string("customer \(id % 997)"), .int(id &* 31 &+ version),
      .string("status \(version % 5)"),
    ])
  }

  static func run(_ arguments: [String]) async throws {
    var rows = 100_000
    let options = try WorkloadArguments(
      arguments, flag: flag, enginesOption: "--unique-update-engines", repetitions: 5, engines: ["postgres"]
    ) { argument, number in
      guard argument == "--unique-update-rows" else { return false }
      rows = try number()
      return true
    }
    guard let schema else { throw BenchError("the order schema is malformed") }
    guard PostgresServer.url != nil else {
      throw BenchError(PostgresServer.absence ?? "name a PostgreSQL server with --postgres-url")
    }
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    say(
      "coffer-bench: updating 10% of \(rows.formatted()) orders with a unique index on PostgreSQL, "
        + "\(options.repetitions) repetitions, Coffer beside raw libpq")

    let coffer = try await Store.open(
      url: try PostgresDatabase.fresh("coffer_bench_unique_update"), registry: .makeBuiltIn())
    try await coffer.prepare(schemas: [schema])
    try await coffer.backend.insert(into: schema, count: rows) { row(Int64($0), version: 0) }
    let raw = try RawOrders(rows: rows)

    let ids = stride(from: Int64(0), to: Int64(rows), by: 10).map { $0 }
    var cofferSamples: [Duration] = []
    var rawSamples: [Duration] = []
    let clock = ContinuousClock()
    for version in Int64(1)...Int64(options.repetitions) {
      var start = clock.now
      try raw.update(ids, version: version)
      rawSamples.append(clock.now - start)
      let changes = ChangeSet(
        ids.map { ChangeSet.Operation.update(entity: schema.name, row: row($0, version: version)) })
      start = clock.now
      let summary = try await coffer.apply(changes)
      cofferSamples.append(clock.now - start)
      guard summary.updated == ids.count else {
        throw BenchError("Coffer updated \(summary.updated) of \(ids.count) orders")
      }
    }
    // Both hold the last version's values.
    let last = Int64(options.repetitions)
    let stored = try await coffer.backend.get(entity: schema, ids: [.int(ids[ids.count / 2])])
    guard stored.first == row(ids[ids.count / 2], version: last) else {
      throw BenchError("Coffer's order \(ids[ids.count / 2]) does not hold the last update")
    }
    try raw.check(ids[ids.count / 2], amount: ids[ids.count / 2] &* 31 &+ last)
    try await coffer.close()

    let figure = (coffer: Measure.median(cofferSamples), raw: Measure.median(rawSamples))
    let ratio = Measure.seconds(figure.coffer) / Measure.seconds(figure.raw)
    say("Coffer \(CascadeBenchmark.time(figure.coffer)), raw libpq \(CascadeBenchmark.time(figure.raw))")
    let text = [
      "# Updates on an entity with a unique index (PostgreSQL)",
      "",
      "Written by `\(command)`: \(rows.formatted()) orders (id, a unique order number, a customer, an amount, "
        + "a status), every tenth one's amount and status changed in one batch — \(ids.count.formatted()) "
        + "updates — through `Store.apply` on the PostgreSQL backend, beside raw libpq running one prepared "
        + "`UPDATE … FROM unnest(…)` over arrays of the new values on a table made as the backend makes it. "
        + "Each figure is the median of \(options.repetitions) updates, the two interleaved. Goal: within "
        + String(format: "%.1fx", goal)
        + " of raw libpq, as Docs/Performance.md sets the backend's update of 10%. "
        + "\(load.finish().sentence) Machine: \(machineDescription()).",
      "PostgreSQL: \(PostgresServer.describe()).",
      "",
      "| rows updated | Coffer | raw libpq | ratio | goal |",
      "|---:|---:|---:|---:|---|",
      "| \(ids.count.formatted()) | \(CascadeBenchmark.time(figure.coffer)) | \(CascadeBenchmark.time(figure.raw)) | "
        + String(format: "%.2fx", ratio) + " | ≤ " + String(format: "%.2fx", goal) + ": "
        + (ratio <= goal ? "met" : "**not met**") + " |",
      "",
    ].joined(separator: "\n")
    print(text)
    if options.write { try writeReport(text, named: "UniqueUpdates.md", to: options.output) }
  }
}

extension PostgresDatabase {
  /// The URL of database `name`, dropped and made again empty.
  static func fresh(_ name: String) throws -> String {
    let database = try PostgresDatabase(name)
    try database.recreate()
    return database.url
  }
}

/// The orders table on raw libpq, made as the PostgreSQL backend makes it: typed columns, text
/// in the `C` collation, a primary key on id and a unique index on the order number.
private final class RawOrders {
  let connection: PQConnection

  init(rows: Int) throws {
    connection = try PQConnection(try PostgresDatabase.fresh("coffer_bench_unique_update_raw"))
    try connection.execute(
      """
      CREATE TABLE "Order" (id bigint PRIMARY KEY, number text COLLATE "C" NOT NULL,
        customer text COLLATE "C" NOT NULL, amount bigint NOT NULL, status text COLLATE "C" NOT NULL);
      CREATE UNIQUE INDEX "Order_number" ON "Order" (number);
      INSERT INTO "Order" SELECT n, 'ORD-' || n, 'customer ' || (n % 997), n * 31, 'status 0'
        FROM generate_series(0, \(rows - 1)) AS n;
      ANALYZE "Order";
      """)
    try connection.prepare(
      "update",
      """
      UPDATE "Order" AS o SET number = v.number, customer = v.customer, amount = v.amount, status = v.status
      FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[])
        AS v(id, number, customer, amount, status)
      WHERE o.id = v.id
      """)
  }

  func update(_ ids: [Int64], version: Int64) throws {
    var parameters = PQParameters(capacity: ids.count * 64)
    func array(_ type: PostgresBinary.TypeID, _ element: @escaping (Int64, inout [UInt8]) -> Void) {
      parameters.append { bytes in
        PostgresBinary.appendArray(of: type, count: ids.count, to: &bytes) { bytes in
          for id in ids { element(id, &bytes) }
        }
      }
    }
    array(.int8) { PostgresBinary.appendField($0, to: &$1) }
    array(.text) { PostgresBinary.appendField("ORD-\($0)", to: &$1) }
    array(.text) { PostgresBinary.appendField("customer \($0 % 997)", to: &$1) }
    array(.int8) { PostgresBinary.appendField($0 &* 31 &+ version, to: &$1) }
    array(.text) { PostgresBinary.appendField("status \(version % 5)", to: &$1) }
    let result = try connection.run("update", parameters)
    guard result.changed == ids.count else {
      throw BenchError("raw libpq updated \(result.changed) of \(ids.count) orders")
    }
  }

  func check(_ id: Int64, amount: Int64) throws {
    let stored = try connection.scalar(#"SELECT amount FROM "Order" WHERE id = \#(id)"#)
    guard stored == String(amount) else { throw BenchError("raw libpq's order \(id) holds amount \(stored)") }
  }
}
