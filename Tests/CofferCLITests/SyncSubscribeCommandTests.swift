@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// `coffer sync --subscribe`: the local store keeps only the rows its subscriptions match.
@Suite struct SyncSubscribeCommandTests {
  static let notebook: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Notebook", fields: [Field("id", .int), Field("owner", .string)], idField: "id")
    } catch {
      preconditionFailure("The test schema is well formed")
    }
  }()

  @Test func subscribeKeepsOnlyTheMatchingRowsLocally() async throws {
    let folder = try TemporaryFolder("coffer-sync-subscribe")
    let local = "sqlite://" + folder.file("local.sqlite")
    let remote = "sqlite://" + folder.file("remote.sqlite")
    for url in [local, remote] {
      let store = try await Store.open(url: url, registry: .builtIn)
      try await store.prepare(schemas: [Self.notebook])
      if url == remote {
        try await store.apply(
          ChangeSet([
            .insert(entity: "Notebook", row: Row([.int(1), .string("ann")])),
            .insert(entity: "Notebook", row: Row([.int(2), .string("bob")])),
          ]))
      }
      try await store.close()
    }
    let filter = #"{"compare":{"field":"owner","op":"==","value":{"string":"ann"}}}"#
    let sync = try await CommandRun.coffer(["sync", local, remote, "--subscribe", "Notebook=" + filter])
    #expect(sync.status == 0, "stderr: \(sync.errorOutput)")
    let store = try await Store.open(url: local, registry: .builtIn)
    try await store.prepare(schemas: [Self.notebook])
    #expect(try await store.fetchRows(Query(entity: "Notebook")) == [Row([.int(1), .string("ann")])])
    try await store.close()

    let bad = try await CommandRun.coffer(["sync", local, remote, "--subscribe", "Notebook={\"owner\":1}"])
    #expect(bad.status != 0)
    #expect(bad.errorOutput.contains("--subscribe Notebook=…"))
  }
}
