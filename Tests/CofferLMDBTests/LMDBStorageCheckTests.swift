import CLMDB
@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@_spi(Backend) @testable import CofferLMDB

/// `describeStorage` reports the catalog's format and the data file's size; `checkStorage` finds
/// nothing in a sound store and finds rows and indexes put out of step with liblmdb directly.
@Suite struct LMDBStorageCheckTests {
  /// A store of twenty notes (and a few changes), closed.
  private func makeStore(_ folder: TemporaryFolder) async throws {
    let store = try await openStore(folder.path)
    try await store.insert((1...20).map(sampleNote))
    var changed = sampleNote(6)
    changed.thread = 9
    changed.handle = nil
    try await store.update(changed)
    try await store.delete(Note.self, id: 10)
    try await store.close()
  }

  /// The problems a backend opened on `path` finds.
  private func problems(_ path: String) async throws -> [IntegrityProblem] {
    let backend = try LMDBBackend(path: path)
    let problems = try await backend.checkStorage()
    try await backend.close()
    return problems
  }

  /// Opens the (closed) store's environment with liblmdb alone and runs `body` in one write
  /// transaction, committed when it returns.
  private func tamper(_ path: String, _ body: (OpaquePointer) throws -> Void) throws {
    var created: OpaquePointer?
    try #require(mdb_env_create(&created) == 0)
    let environment = try #require(created)
    defer { mdb_env_close(environment) }
    try #require(mdb_env_set_maxdbs(environment, 512) == 0)
    try #require(mdb_env_open(environment, path, 0, 0o600) == 0)
    var begun: OpaquePointer?
    try #require(mdb_txn_begin(environment, nil, 0, &begun) == 0)
    let transaction = try #require(begun)
    do {
      try body(transaction)
    } catch {
      mdb_txn_abort(transaction)
      throw error
    }
    try #require(mdb_txn_commit(transaction) == 0)
  }

  /// Opens a database of the transaction by name.
  private func database(_ name: String, _ transaction: OpaquePointer, flags: Int32 = 0) throws -> MDB_dbi {
    var database: MDB_dbi = 0
    try #require(mdb_dbi_open(transaction, name, UInt32(flags), &database) == 0, "open \(name)")
    return database
  }

  /// Every (key, id key) entry of an index database.
  private func entries(_ database: MDB_dbi, _ transaction: OpaquePointer) throws -> [(
    key: [UInt8], id: [UInt8]
  )] {
    var opened: OpaquePointer?
    try #require(mdb_cursor_open(transaction, database, &opened) == 0)
    let cursor = try #require(opened)
    defer { mdb_cursor_close(cursor) }
    var found: [(key: [UInt8], id: [UInt8])] = []
    var key = MDB_val()
    var data = MDB_val()
    var code = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
    while code == 0 {
      found.append(
        (
          Array(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)),
          Array(UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
        ))
      code = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
    }
    return found
  }

  /// Stores `data` under `key` (beside other duplicates in a sorted-duplicates database).
  private func put(_ database: MDB_dbi, _ key: [UInt8], _ data: [UInt8], _ transaction: OpaquePointer) throws
  {
    var key = key
    var data = data
    let code = key.withUnsafeMutableBytes { keyBytes in
      data.withUnsafeMutableBytes { dataBytes in
        var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
        var dataValue = MDB_val(mv_size: dataBytes.count, mv_data: dataBytes.baseAddress)
        return mdb_put(transaction, database, &keyValue, &dataValue, 0)
      }
    }
    try #require(code == 0)
  }

  /// Deletes the pair `key`, `data`, or the key with all its data when `data` is `nil`.
  private func delete(_ database: MDB_dbi, _ key: [UInt8], _ data: [UInt8]?, _ transaction: OpaquePointer)
    throws
  {
    var key = key
    let code = key.withUnsafeMutableBytes { keyBytes in
      var keyValue = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
      guard var data else { return mdb_del(transaction, database, &keyValue, nil) }
      return data.withUnsafeMutableBytes { dataBytes in
        var dataValue = MDB_val(mv_size: dataBytes.count, mv_data: dataBytes.baseAddress)
        return mdb_del(transaction, database, &keyValue, &dataValue)
      }
    }
    try #require(code == 0)
  }

  @Test func describesTheFormatVersionSizeAndEntries() async throws {
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.path)
    try await store.insert((1...20).map(sampleNote))
    let description = try await #require(store.backend as? any StorageInspecting).describeStorage()
    try await store.close()
    #expect(description.formatVersion == "1")
    #expect((description.bytesOnDisk ?? 0) > 0)
    let details = Dictionary(description.details.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
    #expect(details["rows:Note"] == "20 entries", "\(details)")
    #expect(
      details["unique:Note:handle"] == "20 entries", "rows with a null handle have entries too: \(details)")
    #expect((details["pages_used"].flatMap { Int($0) } ?? 0) > 0)
    #expect(details["map_size"] != nil)
    #expect(details["databases"] == "5", "the catalog, the rows and three indexes: \(details)")
  }

  @Test func aSoundStoreHasNoProblemsAndTheCheckWritesNothing() async throws {
    let folder = try TemporaryFolder()
    try await makeStore(folder)
    let backend = try LMDBBackend(path: folder.path)
    let before = try await backend.commitMarker()
    #expect(try await backend.checkStorage() == [])
    #expect(try await backend.commitMarker() == before)
    try await backend.close()
  }

  @Test func anEvolvedStoreHasNoProblems() async throws {
    let folder = try TemporaryFolder()
    try await makeStore(folder)
    // An index dropped and a field added: rows of both layouts, indexes rebuilt.
    let backend = try LMDBBackend(path: folder.path)
    var schema = try #require(try await backend.storedSchemas().first)
    schema = try EntitySchema(
      name: schema.name, fields: schema.fields + [Field("extra", .int, isOptional: true)],
      idField: schema.idField.name, indexes: Array(schema.indexes.dropLast()) + [.on("extra")])
    try await backend.prepare([schema])
    #expect(try await backend.checkStorage() == [])
    try await backend.close()
  }

  @Test func findsARowMissingFromAnIndex() async throws {
    let folder = try TemporaryFolder()
    try await makeStore(folder)
    try tamper(folder.path) { transaction in
      let index = try database("index:Note:thread,date", transaction)
      let entry = try #require(try entries(index, transaction).first { $0.id == KeyEncoding.idKey(.int(7)) })
      try delete(index, entry.key, entry.id, transaction)
    }
    let found = try await problems(folder.path)
    #expect(found.count == 1, "\(found)")
    #expect(
      found.first.map {
        $0.entity == "Note" && $0.id == .int(7) && $0.field == "index:thread,date"
          && $0.message.contains("missing")
      } == true, "\(found)")
  }

  @Test func findsIndexEntriesOfADeletedRow() async throws {
    let folder = try TemporaryFolder()
    try await makeStore(folder)
    try tamper(folder.path) { transaction in
      try delete(try database("rows:Note", transaction), KeyEncoding.idKey(.int(3)), nil, transaction)
    }
    let found = try await problems(folder.path)
    let fields = Set(found.filter { $0.entity == "Note" && $0.id == .int(3) }.compactMap(\.field))
    #expect(fields == ["index:thread,date", "unique:handle", "index:score"], "\(found)")
    #expect(found.allSatisfy { $0.message.contains("not stored") }, "\(found)")
  }

  @Test func findsAnEntryUnderValuesItsRowDoesNotHold() async throws {
    let folder = try TemporaryFolder()
    try await makeStore(folder)
    try tamper(folder.path) { transaction in
      let index = try database("index:Note:score", transaction)
      let all = try entries(index, transaction)
      // Move row 2's entry under row 1's key (their scores differ).
      let two = try #require(all.first { $0.id == KeyEncoding.idKey(.int(2)) })
      let one = try #require(all.first { $0.id == KeyEncoding.idKey(.int(1)) })
      try #require(one.key != two.key)
      try delete(index, two.key, two.id, transaction)
      try put(index, one.key, two.id, transaction)
    }
    let found = try await problems(folder.path)
    #expect(
      found.contains { $0.id == .int(2) && $0.field == "index:score" && $0.message.contains("missing") })
    #expect(
      found.contains {
        $0.id == .int(2) && $0.field == "index:score" && $0.message.contains("does not hold")
      },
      "\(found)")
    #expect(found.count == 2, "\(found)")
  }

  @Test func findsAUniqueValueHeldTwice() async throws {
    let folder = try TemporaryFolder()
    try await makeStore(folder)
    try tamper(folder.path) { transaction in
      // Give row 2 the handle of row 1 ("h2" becomes "h1" in its stored bytes) and move its
      // unique entry along: the row and the index agree, but the value is no longer unique.
      let rows = try database("rows:Note", transaction)
      let id = KeyEncoding.idKey(.int(2))
      var key = id
      var found = MDB_val()
      let code = key.withUnsafeMutableBytes { bytes in
        var keyValue = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
        return mdb_get(transaction, rows, &keyValue, &found)
      }
      try #require(code == 0)
      var row = Array(UnsafeRawBufferPointer(start: found.mv_data, count: found.mv_size))
      let at = try #require(row.indices.first { row[$0...].starts(with: Array("h2".utf8)) })
      row[at + 1] = UInt8(ascii: "1")
      try put(rows, id, row, transaction)
      let index = try database("unique:Note:handle", transaction)
      let all = try entries(index, transaction)
      let two = try #require(all.first { $0.id == id })
      let one = try #require(all.first { $0.id == KeyEncoding.idKey(.int(1)) })
      try delete(index, two.key, two.id, transaction)
      try put(index, one.key, id, transaction)
    }
    let found = try await problems(folder.path)
    #expect(found.count == 1, "\(found)")
    #expect(
      found.first.map {
        $0.entity == "Note" && $0.id == .int(2) && $0.field == "unique:handle"
          && $0.message.contains("Note 1")
          && $0.message.contains("unique")
      } == true, "\(found)")
  }

  @Test func findsDatabasesTheCatalogDoesNotAgreeWith() async throws {
    let folder = try TemporaryFolder()
    try await makeStore(folder)
    try tamper(folder.path) { transaction in
      try #require(mdb_drop(transaction, try database("index:Note:score", transaction), 1) == 0)
      _ = try database("rows:Ghost", transaction, flags: MDB_CREATE)
    }
    let found = try await problems(folder.path)
    #expect(
      found.contains { $0.entity == "Note" && $0.field == "index:score" && $0.message.contains("missing") },
      "\(found)")
    #expect(found.contains { $0.entity == nil && $0.message.contains("'rows:Ghost'") }, "\(found)")
    #expect(found.count == 2, "\(found)")
  }

  @Test func findsARowThatDoesNotDecode() async throws {
    let folder = try TemporaryFolder()
    try await makeStore(folder)
    try tamper(folder.path) { transaction in
      try put(try database("rows:Note", transaction), KeyEncoding.idKey(.int(4)), [1, 0, 3], transaction)
    }
    let found = try await problems(folder.path)
    #expect(
      found.contains { $0.entity == "Note" && $0.id == .int(4) && $0.message.contains("damaged") }, "\(found)"
    )
  }
}
