@_spi(Backend) import Coffer
import CofferStores
import Foundation

/// The cascade-delete benchmark (issue 41): deleting one notebook whose notes cascade from it and
/// whose notes' labellings cascade from the notes, on every backend, SQLite being the reference.
///
/// Per engine and per shape — reference fields without an index (what a schema gets unless it
/// declares one) and with one — each repetition stores a notebook with `--cascade-notes` notes
/// (default 1,000) and `--cascade-labellings` labellings (default 500) beside another notebook
/// that keeps as many (not timed), then times `store.delete(notebook)` (one batch; the core
/// expands the rules). The figure is the median of `--repetitions` (default 5). Goal: each engine
/// within 2x of SQLite's time for the same shape. With a PostgreSQL server named
/// (`--postgres-url` or `COFFER_BENCH_POSTGRES_URL`), the `postgres` engine runs too.
///
/// `coffer-bench --cascade [--cascade-notes N] [--cascade-labellings N] [--repetitions N]
/// [--cascade-engines sqlite,lmdb,memory,plist,postgres] [--postgres-url URL] [--output DIR] [--no-write]`
enum CascadeBenchmark {
  static let flag = "--cascade"
  /// Each engine must take at most this many times SQLite's time.
  static let goal = 2.0

  struct Figure {
    var engine: String
    var indexed: Bool
    var median: Duration
  }

  static func run(_ arguments: [String]) async throws {
    var notes = 1_000
    var labellings = 500
    let options = try WorkloadArguments(
      arguments, flag: flag, enginesOption: "--cascade-engines", repetitions: 5,
      engines: ["sqlite", "lmdb", "memory", "plist"]
    ) { argument, number in
      switch argument {
      case "--cascade-notes": notes = try number()
      case "--cascade-labellings": labellings = try number()
      default: return false
      }
      return true
    }
    let (repetitions, engines, output, write) = (
      options.repetitions, options.engines, options.output, options.write
    )
    guard labellings <= notes else {
      throw UsageError(message: "--cascade-labellings must not exceed --cascade-notes (one per note at most)")
    }
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    say(
      "coffer-bench: cascade delete, \(notes.formatted()) notes and \(labellings.formatted()) labellings, "
        + "\(repetitions) repetitions, engines \(engines.joined(separator: ", "))")
    var figures: [Figure] = []
    for indexed in [false, true] {
      for engine in engines {
        let median = try await measure(
          engine, indexed: indexed, notes: notes, labellings: labellings, repetitions: repetitions)
        say("\(engine), reference fields \(indexed ? "indexed" : "not indexed"): \(time(median))")
        figures.append(Figure(engine: engine, indexed: indexed, median: median))
      }
    }
    let text = report(
      figures, notes: notes, labellings: labellings, repetitions: repetitions, command: command,
      load: load.finish()
    ).joined(separator: "\n")
    print(text)
    if write { try writeReport(text, named: "CascadeSpeed.md", to: output) }
  }

  /// The schemas: a notebook, a label, notes cascading from notebooks, labellings cascading from
  /// notes and from labels; the reference fields indexed or not.
  static func schemas(indexed: Bool) throws -> [EntitySchema] {
    [
      try EntitySchema(
        name: "Notebook", fields: [Field("id", .int), Field("title", .string)], idField: "id"),
      try EntitySchema(name: "Label", fields: [Field("id", .int), Field("name", .string)], idField: "id"),
      try EntitySchema(
        name: "Note",
        fields: [
          Field("id", .int), Field("notebookID", .int), Field("title", .string), Field("body", .string),
        ],
        idField: "id", indexes: indexed ? [.on("notebookID")] : [],
        references: [EntityReference(field: "notebookID", entity: "Notebook", onDelete: .cascade)]),
      try EntitySchema(
        name: "Labelling", fields: [Field("id", .int), Field("noteID", .int), Field("labelID", .int)],
        idField: "id", indexes: indexed ? [.on("noteID"), .on("labelID")] : [],
        references: [
          EntityReference(field: "noteID", entity: "Note", onDelete: .cascade),
          EntityReference(field: "labelID", entity: "Label", onDelete: .cascade),
        ]),
    ]
  }

  /// A notebook with its notes and labellings, ids from `base`.
  static func notebook(_ id: Int64, base: Int64, notes: Int, labellings: Int) -> ChangeSet {
    var changes = ChangeSet()
    changes.insert(Row([.int(id), .string("notebook \(id)")]), into: "Notebook")
    for note in 0..<Int64(notes) {
      changes.insert(
        Row([
          .int(base + note), .int(id), .string("note \(note)"), .string(String(repeating: "x", count: 200)),
        ]),
        into: "Note")
    }
    // Spread over the notes: every second note while there are enough.
    let step = max(1, notes / max(1, labellings))
    for labelling in 0..<Int64(labellings) {
      changes.insert(
        Row([.int(base + labelling), .int(base + labelling * Int64(step)), .int(1 + labelling % 10)]),
        into: "Labelling")
    }
    return changes
  }

  static func measure(_ engine: String, indexed: Bool, notes: Int, labellings: Int, repetitions: Int)
    async throws -> Duration
  {
    let folder = try ScratchFolder("cascade-\(engine)")
    defer { folder.remove() }
    let url = try folder.storeURL(engine, named: "cascade-bench", database: "coffer_bench_cascade")
    let store = try await Store.open(url: url, registry: .makeBuiltIn())
    try await store.prepare(schemas: try schemas(indexed: indexed))
    var labels = ChangeSet()
    for label in 1...Int64(10) {
      labels.insert(Row([.int(label), .string("label \(label)")]), into: "Label")
    }
    // The notebook the deletes leave alone.
    try await store.apply(labels)
    try await store.apply(notebook(1, base: 1_000_000_000, notes: notes, labellings: labellings))
    var round: Int64 = 1
    let median = try await Measure.median(repetitions: repetitions) {
      round += 1
      try await store.apply(notebook(round, base: round * 1_000_000, notes: notes, labellings: labellings))
    } _: {
      try await store.apply(ChangeSet([.delete(entity: "Notebook", id: .int(round))]))
    }
    let left = try await store.countRows(Query(entity: "Note"))
    let leftLabellings = try await store.countRows(Query(entity: "Labelling"))
    try await store.close()
    guard left == notes, leftLabellings == labellings else {
      throw BenchError(
        "\(engine): \(left) notes and \(leftLabellings) labellings left, expected the other notebook's "
          + "\(notes) and \(labellings)")
    }
    return median
  }

  /// A duration in milliseconds, or seconds from ten seconds on.
  static func time(_ duration: Duration) -> String {
    let seconds = Measure.seconds(duration)
    return seconds >= 10 ? String(format: "%.1f s", seconds) : String(format: "%.1f ms", seconds * 1000)
  }

  static func report(
    _ figures: [Figure], notes: Int, labellings: Int, repetitions: Int, command: String,
    load: MachineLoad.Result
  ) -> [String] {
    var lines = [
      "# Cascade-delete speed",
      "",
      "Written by `\(command)`: deleting one notebook with \(notes.formatted()) notes (rule cascade) and "
        + "\(labellings.formatted()) labellings of those notes (rule cascade from notes and from labels), beside "
        + "another notebook as large that stays, each figure the median of \(repetitions) deletes, each of a "
        + "freshly stored notebook. Goal: every backend within \(goal)x of SQLite's time for the same shape. "
        + "\(load.sentence) Machine: \(machineDescription()).",
      "",
      "| backend | reference fields | delete | SQLite | ratio | goal |",
      "|---|---|---:|---:|---:|---|",
    ]
    for figure in figures {
      guard
        let reference = figures.first(where: { $0.engine == "sqlite" && $0.indexed == figure.indexed })
      else { continue }
      let ratio = Measure.seconds(figure.median) / Measure.seconds(reference.median)
      lines.append(
        "| \(figure.engine) | \(figure.indexed ? "indexed" : "not indexed") | \(time(figure.median)) | "
          + "\(time(reference.median)) | " + String(format: "%.2fx", ratio) + " | "
          + (figure.engine == "sqlite" ? "reference" : ratio <= goal ? "met" : "**not met**") + " |")
    }
    lines.append("")
    lines.append(
      "The core expands the delete into one batch level by level: the ids of the notebook's notes are read once, "
        + "pinned by a precondition and the notes deleted by id, and their labellings are counted, pinned by a "
        + "precondition and deleted by filter once per 500 notes — once per 10,000 on PostgreSQL, which filters on a "
        + "whole list in one statement (see the Queries article).")
    lines.append("")
    return lines
  }
}
