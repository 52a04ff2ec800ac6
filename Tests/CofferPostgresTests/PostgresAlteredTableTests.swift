import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// A table changed behind Coffer's back (with `psql`): preparing the entity fails with
/// `schemaMismatch` naming entity and field, and nothing is dropped or converted.
@Suite struct PostgresAlteredTableTests {
  let items = (Int64(1)...3).map { FaultItem(id: $0, batch: $0 * 10, title: "kept \($0)") }

  @Test func aColumnChangedToTextIsASchemaMismatchAndKeepsTheData() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let writer = try await scratch.open()
      try await writer.insert(items)
      try await writer.close()
      try await server.psql("ALTER TABLE \(scratch.table("FaultItem")) ALTER COLUMN \"batch\" TYPE text")

      let reopened = try await scratch.open()
      let error = await expectCofferError(.schemaMismatch) { try await reopened.prepare([FaultItem.self]) }
      #expect(error?.entity == "FaultItem")
      #expect(error?.field == "batch")
      #expect(error?.message.contains("batch") == true)
      #expect(error?.message.contains("text") == true, "\(String(describing: error))")
      #expect(
        error?.names(address: server.address, database: server.database) == true,
        "\(String(describing: error))")
      #expect(error?.reveals(server.password) == false)
      // A first write prepares too, and fails the same way without writing.
      _ = await expectCofferError(.schemaMismatch) {
        try await reopened.insert(FaultItem(id: 4, batch: 40, title: "refused"))
      }
      try await reopened.close()

      #expect(try await server.psql("SELECT count(*) FROM \(scratch.table("FaultItem"))") == "3")
      #expect(
        try await server.psql("SELECT \"batch\" FROM \(scratch.table("FaultItem")) ORDER BY id")
          == "10\n20\n30")
      #expect(
        try await server.psql(
          """
          SELECT data_type FROM information_schema.columns WHERE table_schema = '\(scratch.schema)'
          AND table_name = 'FaultItem' AND column_name = 'batch'
          """) == "text")

      // Changed back, the table opens again with every row as it was.
      try await server.psql(
        "ALTER TABLE \(scratch.table("FaultItem")) ALTER COLUMN \"batch\" TYPE bigint USING \"batch\"::bigint"
      )
      let restored = try await scratch.open()
      #expect(try await restored.query(FaultItem.self).sort([Sort("id")]).fetch() == items)
      try await restored.close()
    }
  }

  @Test func aDroppedColumnIsASchemaMismatch() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let writer = try await scratch.open()
      try await writer.insert(items)
      try await writer.close()
      try await server.psql("ALTER TABLE \(scratch.table("FaultItem")) DROP COLUMN \"title\"")

      let reopened = try await scratch.open()
      let error = await expectCofferError(.schemaMismatch) { try await reopened.prepare([FaultItem.self]) }
      #expect(error?.entity == "FaultItem")
      #expect(error?.field == "title")
      try await reopened.close()
      #expect(try await server.psql("SELECT count(*) FROM \(scratch.table("FaultItem"))") == "3")
    }
  }
}
