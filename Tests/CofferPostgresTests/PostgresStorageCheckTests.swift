@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// A row with a plain and a unique index, for the storage checks.
struct CheckedItem: Storable, Equatable {
  var id: Int64
  var batch: Int64
  var title: String
  var code: String?

  static var indexes: [Index] { [.on("batch"), .unique("code")] }
}

/// `describeStorage` reports the catalog's format and the tables' size on the server;
/// `checkStorage` finds nothing in a sound store and finds tables and indexes changed behind
/// Coffer's back with `psql`.
@Suite struct PostgresStorageCheckTests {
  let items = (Int64(1)...12).map {
    CheckedItem(id: $0, batch: $0 % 3, title: "item \($0)", code: $0 % 4 == 0 ? nil : "c\($0)")
  }

  /// Fills the scratch store with the items and closes it.
  private func fill(_ scratch: PostgresScratch) async throws {
    let store = try await scratch.open()
    try await store.insert(items)
    try await store.close()
  }

  /// What a newly opened store finds.
  private func problems(_ scratch: PostgresScratch) async throws -> [IntegrityProblem] {
    let store = try await scratch.open()
    let problems = try await #require(store.backend as? any StorageInspecting).checkStorage()
    try await store.close()
    return problems
  }

  @Test func describesTheFormatVersionSizeAndServer() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      try await fill(scratch)
      let store = try await scratch.open()
      let description = try await #require(store.backend as? any StorageInspecting).describeStorage()
      try await store.close()
      #expect(description.formatVersion == "1")
      #expect((description.bytesOnDisk ?? 0) > 0)
      let details = Dictionary(description.details.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
      #expect(details["server_version"]?.isEmpty == false, "\(details)")
      #expect(details["schema"] == scratch.schema)
      #expect(details["entities"] == "1")
      #expect(!description.details.contains { $0.value.contains(server.password) })
    }
  }

  @Test func aSoundStoreHasNoProblems() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      try await fill(scratch)
      #expect(try await problems(scratch) == [])
    }
  }

  @Test func findsADroppedIndexAndAChangedColumn() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      try await fill(scratch)
      try await server.psql("DROP INDEX \"\(scratch.schema)\".\"CheckedItem/unique/code\"")
      try await server.psql(
        "ALTER TABLE \(scratch.table("CheckedItem")) ALTER COLUMN \"title\" TYPE varchar(40)")

      let found = try await problems(scratch)
      #expect(
        found.contains {
          $0.entity == "CheckedItem" && $0.field == "unique:code" && $0.message.contains("missing")
        }, "\(found)")
      #expect(
        found.contains {
          $0.entity == "CheckedItem" && $0.field == "title" && $0.message.contains("character varying(40)")
        }, "\(found)")
      #expect(found.count == 2, "\(found)")
    }
  }

  @Test func findsAnInvalidIndexLeftByAFailedConcurrentBuild() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      try await fill(scratch)
      // Rebuild the unique index concurrently over values that are no longer unique: the build
      // fails and leaves the index in place, invalid.
      let index = "\"\(scratch.schema)\".\"CheckedItem/unique/code\""
      try await server.psql("DROP INDEX \(index)")
      try await server.psql("UPDATE \(scratch.table("CheckedItem")) SET \"code\" = 'c1' WHERE \"id\" = 2")
      await #expect(throws: PSQLFailure.self) {
        try await server.psql(
          "CREATE UNIQUE INDEX CONCURRENTLY \"CheckedItem/unique/code\" ON \(scratch.table("CheckedItem")) "
            + "(\"code\" NULLS FIRST)")
      }
      #expect(
        try await server.psql("SELECT indisvalid FROM pg_index WHERE indexrelid = '\(index)'::regclass")
          == "f")

      let found = try await problems(scratch)
      #expect(found.count == 1, "\(found)")
      #expect(
        found.first.map {
          $0.entity == "CheckedItem" && $0.field == "unique:code" && $0.message.contains("invalid")
        } == true, "\(found)")
    }
  }

  @Test func findsAMissingTable() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      try await fill(scratch)
      try await server.psql("DROP TABLE \(scratch.table("CheckedItem"))")
      let found = try await problems(scratch)
      #expect(found.count == 1, "\(found)")
      #expect(
        found.first?.entity == "CheckedItem" && found.first?.message.contains("missing") == true, "\(found)")
    }
  }
}
