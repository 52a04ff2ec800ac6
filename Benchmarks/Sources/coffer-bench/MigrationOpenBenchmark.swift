@_spi(Backend) import Coffer
import CofferStores
import Foundation

/// Opening a store with a migration plan (issue 41): a store of `--migration-open-rows` items
/// (default 10,000) is filled (not timed), closed, and opened again with
/// `Store.open(url:registry:migrating:)` and a three-step plan — a field renamed, a field's kind
/// changed from Int64 to Double, and a custom step rewriting every row through
/// `MigrationContext.rewrite` — on each engine, SQLite being the reference. The figure is the
/// median of `--repetitions` (default 5) opens, each of a freshly filled store. The issue sets no
/// ratio; the report shows each engine's beside SQLite's. With a PostgreSQL server named
/// (`--postgres-url` or `COFFER_BENCH_POSTGRES_URL`), the `postgres` engine runs too.
///
/// `coffer-bench --migration-open [--migration-open-rows N] [--repetitions N]
/// [--migration-open-engines sqlite,lmdb,plist,postgres] [--postgres-url URL] [--output DIR] [--no-write]`
enum MigrationOpenBenchmark {
  static let flag = "--migration-open"

  /// The items as stored before the plan.
  static let before = try? EntitySchema(
    name: "Item",
    fields: [Field("id", .int), Field("name", .string), Field("count", .int), Field("note", .string)],
    idField: "id")
  /// The items as the plan leaves them.
  static let after = try? EntitySchema(
    name: "Item",
    fields: [Field("id", .int), Field("title", .string), Field("count", .double), Field("note", .string)],
    idField: "id")

  /// The plan: a rename, a kind change the engines convert, a custom rewrite of every row.
  static func plan(_ after: EntitySchema) -> MigrationPlan {
    MigrationPlan([
      .renameField("open-rename", entity: "Item", from: "name", to: "title"),
      .changeKind("open-count-as-double", entity: "Item", field: "count", to: .double),
      .custom("open-rewrite-notes") { context in
        let entity = try DynamicEntity(schema: after)
        try context.rewrite("Item", as: after) { record in
          var attributes = record.attributes
          if case .string(let note)? = attributes["note"] { attributes["note"] = .string(note.uppercased()) }
          return try DynamicRecord(entity, attributes: attributes)
        }
      },
    ])
  }

  static func run(_ arguments: [String]) async throws {
    var rows = 10_000
    let options = try WorkloadArguments(
      arguments, flag: flag, enginesOption: "--migration-open-engines", repetitions: 5,
      engines: ["sqlite", "lmdb", "plist"]
    ) { argument, number in
      guard argument == "--migration-open-rows" else { return false }
      rows = try number()
      return true
    }
    let (repetitions, engines, output, write) = (
      options.repetitions, options.engines, options.output, options.write
    )
    guard let before, let after else { throw BenchError("the item schemas are malformed") }
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    say(
      "coffer-bench: opening a store of \(rows.formatted()) items with a three-step migration plan, "
        + "\(repetitions) repetitions, engines \(engines.joined(separator: ", "))")
    var figures: [(engine: String, median: Duration)] = []
    for engine in engines {
      let median = try await measure(
        engine, rows: rows, repetitions: repetitions, before: before, after: after)
      say("\(engine): \(CascadeBenchmark.time(median))")
      figures.append((engine, median))
    }
    let text = report(figures, rows: rows, repetitions: repetitions, command: command, load: load.finish())
      .joined(separator: "\n")
    print(text)
    if write { try writeReport(text, named: "MigrationOpenSpeed.md", to: output) }
  }

  static func measure(
    _ engine: String, rows: Int, repetitions: Int, before: EntitySchema, after: EntitySchema
  ) async throws -> Duration {
    let folder = try ScratchFolder("migration-open-\(engine)")
    defer { folder.remove() }
    var round = 0
    var url = ""
    let median = try await Measure.median(repetitions: repetitions) {
      round += 1
      url = try folder.storeURL(engine, named: "store-\(round)", database: "coffer_bench_migration_open")
      let store = try await Store.open(url: url, registry: .makeBuiltIn())
      try await store.prepare(schemas: [before])
      try await store.backend.insert(into: before, count: rows) { index in
        Row([
          .int(Int64(index)), .string("item \(index)"), .int(Int64(index % 97)),
          .string("note for item \(index)"),
        ])
      }
      try await store.close()
    } _: {
      let store = try await Store.open(url: url, registry: .makeBuiltIn(), migrating: plan(after))
      try await store.close()
    }
    // The last store holds what the plan made of every row.
    let store = try await Store.open(url: url, registry: .makeBuiltIn())
    try await store.prepare(schemas: [after])
    let migrated = try await store.countRows(
      Query(entity: "Item", filter: .string(field: "note", match: .hasPrefix, pattern: "NOTE FOR ITEM")))
    try await store.close()
    guard migrated == rows else {
      throw BenchError("\(engine): \(migrated) of \(rows) items were rewritten by the plan")
    }
    return median
  }

  static func report(
    _ figures: [(engine: String, median: Duration)], rows: Int, repetitions: Int, command: String,
    load: MachineLoad.Result
  ) -> [String] {
    var lines = [
      "# Opening a store with a migration plan",
      "",
      "Written by `\(command)`: opening a store of \(rows.formatted()) items with `Store.open(url:registry:migrating:)` "
        + "and a three-step plan — a field renamed, a field's kind changed from Int64 to Double, a custom step "
        + "rewriting every row through `MigrationContext.rewrite` — each figure the median of \(repetitions) opens, "
        + "each of a freshly filled store (the fill is not timed). The issue sets no ratio; SQLite is the reference. "
        + "\(load.sentence) Machine: \(machineDescription()).",
      "",
      "| backend | open and migrate | SQLite | ratio |",
      "|---|---:|---:|---:|",
    ]
    guard let reference = figures.first(where: { $0.engine == "sqlite" }) else { return lines }
    for figure in figures {
      let ratio = Measure.seconds(figure.median) / Measure.seconds(reference.median)
      lines.append(
        "| \(figure.engine) | \(CascadeBenchmark.time(figure.median)) | \(CascadeBenchmark.time(reference.median)) | "
          + String(format: "%.2fx", ratio) + " |")
    }
    lines.append("")
    return lines
  }
}
