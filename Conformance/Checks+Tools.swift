@_spi(Backend) import Coffer
import CofferTools
import Foundation

/// Fills a new scratch store with ``EveryKindFixture`` and `extra` ordinary rows.
private func filledStore(_ context: CheckContext, extra: Int = 0) async throws -> Store {
  let store = try await context.store()
  try await store.prepare(schemas: EveryKindFixture.schemas)
  try await store.apply(EveryKindFixture.changeSet(extra: extra))
  return store
}

/// Every row of every entity, sorted by id, for comparing two stores value by value.
private func everyRow(_ store: Store) async throws -> [String: [Row]] {
  var rows: [String: [Row]] = [:]
  for schema in try await store.storedSchemas() {
    var query = Query(entity: schema.name, sort: [Sort(schema.idField.name)])
    query.layout = schema
    rows[schema.name] = try await store.backend.fetch(query)
  }
  return rows
}

/// An export of a store, as its lines.
private func exportLines(_ store: Store) async throws -> [String] {
  var text = ""
  try await store.exportJSONLines { text += $0 }
  return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
}

extension ConformanceSuite {
  static let toolChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "read.visitor-error-stops-the-read",
      "An error thrown by read's visitor stops the read and comes out of it unchanged (also in a snapshot); "
        + "the store answers as before afterwards. The data tools stop reads this way."
    ) { context in
      let store = try await filledStore(context, extra: 100)
      struct Stop: Error {}
      func stopsAtThird(_ read: ((any StoredFields) throws -> Void) async throws -> Void, _ what: String)
        async throws
      {
        var seen = 0
        do {
          try await read { _ in
            seen += 1
            if seen == 3 { throw Stop() }
          }
          throw CheckFailure("\(what): the read went on after its visitor threw")
        } catch is Stop {
          try expectEqual(seen, 3, "\(what): rows visited")
        } catch let failure as CheckFailure {
          throw failure
        } catch {
          throw CheckFailure("\(what): expected the visitor's own error, got \(error)")
        }
      }
      let query = Query(entity: "Every", sort: [Sort("id")])
      try await stopsAtThird({ try await store.backend.read(query, $0) }, "read")
      if let reading = store.backend as? any SnapshotReading {
        try await reading.withSnapshot { snapshot in
          try await stopsAtThird({ try await snapshot.read(query, $0) }, "read in a snapshot")
          try expectEqual(
            try await snapshot.count(Query(entity: "Every")), 108, "rows counted in the snapshot after")
        }
      }
      try expectEqual(try await store.countRows(Query(entity: "Every")), 108, "rows counted after")
      try expectEqual(try await store.fetchRows(query).count, 108, "rows read after")
    },
    ConformanceCheck(
      "read.release-cached-memory-changes-nothing", requires: .cachedMemoryRelease,
      "releaseCachedMemory() changes nothing a read returns or a write stores: called in the middle of a "
        + "read (also in a snapshot), between batches and from another task while reads run."
    ) { context in
      let store = try await filledStore(context, extra: 2_000)
      guard let backend = store.backend as? any CachedMemoryReleasing else {
        throw CheckFailure("the backend does not adopt CachedMemoryReleasing")
      }
      let query = Query(entity: "Every", sort: [Sort("id")])
      let expected = try await store.fetchRows(query)
      func readReleasing(_ read: ((any StoredFields) throws -> Void) async throws -> Void) async throws
        -> [Row]
      {
        var rows: [Row] = []
        try await read { fields in
          rows.append(try Row(fields))
          if rows.count.isMultiple(of: 97) { backend.releaseCachedMemory() }
        }
        return rows
      }
      try expectEqual(try await readReleasing { try await backend.read(query, $0) }, expected, "rows read")
      if let reading = backend as? any SnapshotReading {
        try await reading.withSnapshot { snapshot in
          let rows = try await readReleasing { try await snapshot.read(query, $0) }
          try expectEqual(rows, expected, "rows read in a snapshot")
        }
      }
      try await store.apply(
        ChangeSet([
          .insertMany(
            entity: "Every", rows: RowSource((0..<3).map { EveryKindFixture.ordinary(10_000 + $0) }))
        ]))
      backend.releaseCachedMemory()
      let grown = try await store.fetchRows(query)
      try expectEqual(grown.count, expected.count + 3, "rows after a batch and a release")
      let releasing = Task.detached {
        for _ in 0..<200 {
          backend.releaseCachedMemory()
          await Task.yield()
        }
      }
      for _ in 0..<5 {
        try expectEqual(try await store.fetchRows(query), grown, "rows read while another task releases")
      }
      await releasing.value
    },
    ConformanceCheck(
      "tools.inspect-lists-entities",
      "inspect() lists every stored entity with its exact schema and row count."
    ) { context in
      let store = try await filledStore(context, extra: 5)
      let inspection = try await store.inspect()
      try expectEqual(inspection.entities.map(\.schema), EveryKindFixture.schemas, "schemas inspected")
      try expectEqual(inspection.entities.map(\.rows), [13, 9, 9], "rows per entity (Every, Keyed, Named)")
      try expectEqual(inspection.store, store.backend.name, "the store's name")
    },
    ConformanceCheck(
      "tools.digest-order-independent",
      "A digest depends on the rows alone: the same rows inserted in another order give the same digest, "
        + "and one changed bit (0.0 for -0.0) changes it."
    ) { context in
      let first = try await filledStore(context)
      let second = try await context.store()
      try await second.prepare(schemas: EveryKindFixture.schemas)
      var operations = EveryKindFixture.changeSet().operations.reversed().map { $0 }
      if case .insertMany(let entity, let rows) = operations[2] {
        let reversed = try (0..<rows.count).reversed().map { try rows.row(at: $0) }
        operations[2] = .insertMany(entity: entity, rows: RowSource(reversed))
      }
      try await second.apply(ChangeSet(operations, layouts: EveryKindFixture.changeSet().layouts))
      let digest = try await first.digest()
      try expectEqual(try await second.digest(), digest, "digest of the same rows inserted in reverse")
      let every = EveryKindFixture.schema("Every")
      guard let position = every.position(of: "double"),
        var row = try await first.getRows(entity: "Every", ids: [.int(-2)]).first
      else {
        throw CheckFailure("row -2 of Every is missing")
      }
      guard case .double(let stored) = row[position], stored.bitPattern == (-0.0).bitPattern else {
        throw CheckFailure(
          "row -2 of Every holds \(row[position].kind?.rawValue ?? "null") other than -0.0 in `double`")
      }
      row[position] = .double(0.0)
      try await first.apply(ChangeSet([.update(entity: "Every", row: row)]))
      let changed = try await first.digest()
      try expect(changed != digest, "the digest changed when -0.0 became 0.0")
      try expectEqual(changed.differences(from: digest).count, 1, "entities that differ")
    },
    ConformanceCheck(
      "tools.copy-out-and-back",
      "A store copied into a second store and from there into a third has the same schemas, rows and "
        + "digest; each copy is verified."
    ) { context in
      let source = try await filledStore(context, extra: 40)
      let middle = try await context.store()
      var out = StoreCopier(from: source, to: middle)
      out.batchSize = 7
      let first = try await out.run()
      try expect(first.isVerified, "the first copy is verified (\(first.differences))")
      let back = try await context.store()
      var returning = StoreCopier(from: middle, to: back)
      returning.batchSize = 11
      let second = try await returning.run()
      try expect(second.isVerified, "the copy back is verified (\(second.differences))")
      try expectEqual(
        try await back.storedSchemas(), EveryKindFixture.schemas, "schemas after the round trip")
      try expectEqual(try await back.digest(), try await source.digest(), "digests after the round trip")
      try expectEqual(try await everyRow(back), try await everyRow(source), "rows after the round trip")
      try expectEqual(second.rowsCopied, 48 + 9 + 9, "rows copied back")
    },
    ConformanceCheck(
      "tools.copy-refuses-non-empty-and-resumes",
      "A copy refuses a target holding rows (notEmpty); with resume it continues after the rows an "
        + "interrupted copy left, inserting none twice, and refuses rows no copy left (conflict)."
    ) { context in
      let source = try await filledStore(context, extra: 30)
      let target = try await context.store()
      try await target.prepare(schemas: EveryKindFixture.schemas)
      let every = EveryKindFixture.schema("Every")
      var firstRows = Query(entity: "Every", sort: [Sort("id")], limit: 12)
      firstRows.layout = every
      let prefix = try await source.backend.fetch(firstRows)
      try await target.apply(ChangeSet([.insertMany(entity: "Every", rows: RowSource(prefix))]))
      try await expectThrows(.notEmpty, "a copy into a store holding 12 rows") {
        try await StoreCopier(from: source, to: target).run()
      }
      var resumed = StoreCopier(from: source, to: target)
      resumed.resume = true
      resumed.batchSize = 5
      let report = try await resumed.run()
      try expect(report.isVerified, "the resumed copy is verified (\(report.differences))")
      try expectEqual(
        report.entities.first { $0.entity == "Every" }?.rowsAlreadyThere, 12,
        "rows of Every found already copied")
      try expectEqual(report.rowsCopied, 38 - 12 + 9 + 9, "rows the resumed copy inserted")

      let stranger = try await context.store()
      try await stranger.prepare(schemas: EveryKindFixture.schemas)
      try await stranger.apply(ChangeSet([.insert(entity: "Every", row: EveryKindFixture.ordinary(5_000))]))
      try await expectThrows(.conflict, "resuming into a store whose rows no copy from this source left") {
        var copier = StoreCopier(from: source, to: stranger)
        copier.resume = true
        return try await copier.run()
      }
    },
    ConformanceCheck(
      "tools.copy-resume-checks-what-it-skips",
      "A resumed copy whose target holds the right ids up to its last one, but one of them with other "
        + "values, is refused (conflict naming the entity) before it writes a row."
    ) { context in
      let source = try await filledStore(context, extra: 30)
      let target = try await context.store()
      try await target.prepare(schemas: EveryKindFixture.schemas)
      let every = EveryKindFixture.schema("Every")
      var firstRows = Query(entity: "Every", sort: [Sort("id")], limit: 12)
      firstRows.layout = every
      var prefix = try await source.backend.fetch(firstRows)
      guard let textPosition = every.fields.firstIndex(where: { $0.name == "string" }) else {
        throw CheckFailure("the fixture has no string field")
      }
      prefix[3][textPosition] = .string("changed since the copy")
      try await target.apply(ChangeSet([.insertMany(entity: "Every", rows: RowSource(prefix))]))
      let error = try await expectThrows(.conflict, "resuming over a changed row") {
        var copier = StoreCopier(from: source, to: target)
        copier.resume = true
        return try await copier.run()
      }
      try expectEqual(error.entity, "Every", "the entity the error names")
      try expectEqual(try await target.countRows(Query(entity: "Every")), 12, "rows of Every in the target")
    },
    ConformanceCheck(
      "tools.copy-events-and-cancel",
      "StoreCopier.events() gives progress that only grows, then the report; a copy cancelled after its "
        + "first batch stops before the next, leaving the loop of events stops one after whole batches, and a "
        + "resumed copy completes either."
    ) { context in
      let source = try await filledStore(context, extra: 60)
      let full = try await context.store()
      var copier = StoreCopier(from: source, to: full)
      copier.batchSize = 7
      var copied: [Int] = []
      var report: CopyReport?
      for try await event in copier.events() {
        switch event {
        case .progress(let progress):
          try expect(report == nil, "progress after the report")
          copied.append(progress.rowsCopied)
          try expectEqual(progress.totalRows, 68 + 9 + 9, "rows to copy, as progress tells")
        case .finished(let finished): report = finished
        }
      }
      guard let finished = report else { throw CheckFailure("no report came as the last event") }
      try expect(finished.isVerified, "the copy is verified (\(finished.differences))")
      try expectEqual(copied, copied.sorted(), "rows copied, as progress tells, never go down")
      try expectEqual(copied.last, 68 + 9 + 9, "rows copied at the last progress")

      // Cancelled from its own progress after the first batch: it stops before the next.
      let cut = try await context.store()
      var stopped = StoreCopier(from: source, to: cut)
      stopped.batchSize = 7
      let copy = Task {
        try await stopped.run { progress in
          if progress.rowsCopied > 0 { withUnsafeCurrentTask { $0?.cancel() } }
        }
      }
      do {
        _ = try await copy.value
        throw CheckFailure("a cancelled copy ran to its end")
      } catch is CancellationError {
      }
      try expectEqual(try await cut.countRows(Query(entity: "Every")), 7, "rows copied before the cancel")
      // Leaving the loop of events stops the copy too, after some whole batches.
      let left = try await context.store()
      var abandoned = StoreCopier(from: source, to: left)
      abandoned.batchSize = 7
      for try await event in abandoned.events() {
        if case .progress(let progress) = event, progress.rowsCopied > 0 { break }
      }
      var rowsLeft = -1
      for _ in 0..<100 {
        let now = try await left.countRows(Query(entity: "Every"))
        if now == rowsLeft { break }
        rowsLeft = now
        try await Task.sleep(for: .milliseconds(20))
      }
      try expect(rowsLeft.isMultiple(of: 7) || rowsLeft == 68, "whole batches left: \(rowsLeft) rows")
      for target in [cut, left] {
        var resumed = StoreCopier(from: source, to: target)
        resumed.resume = true
        let completed = try await resumed.run()
        try expect(completed.isVerified, "the resumed copy is verified (\(completed.differences))")
        try expectEqual(try await everyRow(target), try await everyRow(source), "rows after the resumed copy")
      }
    },
    ConformanceCheck(
      "tools.export-import-exact",
      "An export imported into a new store of the same backend gives the same schemas, rows and digest."
    ) { context in
      let source = try await filledStore(context, extra: 25)
      let lines = try await exportLines(source)
      let target = try await context.store()
      let report = try await target.importJSONLines(AsyncLines(lines))
      try expectEqual(report.digest, try await source.digest(), "digest of the import")
      try expectEqual(try await target.storedSchemas(), EveryKindFixture.schemas, "schemas imported")
      try expectEqual(try await everyRow(target), try await everyRow(source), "rows imported")
    },
    ConformanceCheck(
      "tools.export-pieces-import",
      "The pieces of text exportJSONLines hands its closure, given as they are to importJSONLines, import "
        + "exactly: the two meet in one shape (whole lines per element)."
    ) { context in
      let source = try await filledStore(context, extra: 1_500)
      var pieces: [String] = []
      try await source.exportJSONLines { pieces.append($0) }
      try expect(pieces.contains { $0.filter { $0 == "\n" }.count > 1 }, "some piece holds several lines")
      let target = try await context.store()
      let report = try await target.importJSONLines(AsyncLines(pieces))
      try expectEqual(report.digest, try await source.digest(), "digest of the import")
      try expectEqual(try await everyRow(target), try await everyRow(source), "rows imported")
    },
    ConformanceCheck(
      "tools.import-into-reopened-store", requires: .reopenable,
      "An import into a reopened store that holds other entities imports them; importing the same export "
        + "again fails with notEmpty and changes nothing; a malformed line's error names its line."
    ) { context in
      let source = try await filledStore(context, extra: 10)
      let lines = try await exportLines(source)
      var store = try await context.store()
      try await store.prepare([Sample.self])
      try await store.insert(Sample(id: 1, text: "kept"))
      store = try await context.reopen(store)
      let report = try await store.importJSONLines(AsyncLines(lines))
      try expectEqual(report.digest, try await source.digest(), "digest of the first import")
      store = try await context.reopen(store)
      let error = try await expectThrows(.notEmpty, "importing the same export a second time") {
        try await store.importJSONLines(AsyncLines(lines))
      }
      try expectEqual(error.entity, EveryKindFixture.schemas.first?.name, "the entity the error names")
      try await store.prepare(schemas: EveryKindFixture.schemas)
      try await store.prepare([Sample.self])
      var kept = try await everyRow(store)
      kept["Sample"] = nil
      try expectEqual(kept, try await everyRow(source), "rows kept")
      try expectEqual(try await store.get(Sample.self, id: 1)?.text, "kept", "the other entity's row")
      var malformed = lines
      guard let rowLine = malformed.firstIndex(where: { $0.hasPrefix("{\"row\":") }) else {
        throw CheckFailure("the export has no row line")
      }
      malformed[rowLine] = "{\"row\":{"
      let empty = try await context.store()
      try await empty.prepare([Sample.self])
      let reopened = try await context.reopen(empty)
      let lineError = try await expectThrows(.invalidInput, "importing an export with a malformed header") {
        try await reopened.importJSONLines(AsyncLines(malformed))
      }
      try expect(
        lineError.message.hasPrefix("Line \(rowLine + 1): "), "the error names the line: \(lineError.message)"
      )
    },
    ConformanceCheck(
      "tools.import-cut-short-leaves-nothing",
      "An export cut short, or with a row altered, fails to import (invalidInput naming the line) and "
        + "leaves no row in the store."
    ) { context in
      let source = try await filledStore(context, extra: 10)
      let lines = try await exportLines(source).filter { !$0.isEmpty }
      let target = try await context.store()
      let error = try await expectThrows(.invalidInput, "importing an export without its last two lines") {
        try await target.importJSONLines(AsyncLines(Array(lines.dropLast(2))))
      }
      try expect(
        error.message.contains("Line") || error.message.contains("cut short"),
        "the error says where: \(error)")
      for schema in try await target.storedSchemas() {
        try expectEqual(
          try await target.countRows(Query(entity: schema.name)), 0, "rows of \(schema.name) left")
      }
      var altered = lines
      guard let rowLine = altered.firstIndex(where: { $0.contains("\"row 1003\"") }) else {
        throw CheckFailure("the export has no line for row 1003")
      }
      altered[rowLine] = altered[rowLine].replacingOccurrences(of: "\"row 1003\"", with: "\"row 1003!\"")
      let second = try await context.store()
      try await expectThrows(.invalidInput, "importing an export with an altered row") {
        try await second.importJSONLines(AsyncLines(altered))
      }
      for schema in try await second.storedSchemas() {
        try expectEqual(
          try await second.countRows(Query(entity: schema.name)), 0, "rows of \(schema.name) left")
      }
    },
    ConformanceCheck(
      "tools.verify-clean-store",
      "verify() finds no problem in a store that was filled, changed, evolved and reopened, and reads "
        + "every row."
    ) { context in
      let store = try await filledStore(context, extra: 20)
      try await store.apply(
        ChangeSet([
          .delete(entity: "Every", id: .int(1_003)),
          .updateMatching(
            entity: "Every", filter: .compare(field: "id", op: .greater, value: .int(1_010)),
            changes: [.add("int", .int(5))]),
        ]))
      let report = try await store.verify()
      try expect(report.isClean, "no problems (found: \(report.problems))")
      try expectEqual(report.rows, 27 + 9 + 9, "rows read")
      try expectEqual(report.entities.map(\.indexesChecked), [3, 1, 1], "indexes compared per entity")
    },
  ]
}

/// Lines as an asynchronous sequence, as a file would hand them over.
struct AsyncLines: AsyncSequence, Sendable {
  typealias Element = String
  let lines: [String]
  init(_ lines: [String]) { self.lines = lines }
  func makeAsyncIterator() -> Iterator { Iterator(lines: lines) }
  struct Iterator: AsyncIteratorProtocol {
    var lines: [String]
    var position = 0
    mutating func next() async -> String? {
      guard position < lines.count else { return nil }
      defer { position += 1 }
      return lines[position]
    }
  }
}
