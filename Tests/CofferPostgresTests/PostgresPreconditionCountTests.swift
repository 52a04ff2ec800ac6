@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

/// PostgreSQL counts a batch's count preconditions and its pins of ids together on the server;
/// each still fails the batch exactly when its rows differ, naming the entity.
@Suite struct PostgresPreconditionCountTests {
  static let notes: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Note", fields: [Field("id", .int), Field("book", .int), Field("body", .string)], idField: "id")
    } catch {
      preconditionFailure("the test's schema is well formed: \(error)")
    }
  }()

  /// The notes of a book, read in the id field alone, as the reference rules pin them.
  func pin(book: Int64, ids: [Int64]) throws -> ChangeSet.Precondition {
    var query = Query(entity: "Note", filter: .compare(field: "book", op: .equal, value: .int(book)))
    query.layout = try EntitySchema(name: "Note", fields: [Field("id", .int)], idField: "id")
    return ChangeSet.Precondition(query, .rows(ids.map { Row([.int($0)]) }))
  }

  func count(book: Int64, _ count: Int) -> ChangeSet.Precondition {
    var query = Query(entity: "Note", filter: .compare(field: "book", op: .equal, value: .int(book)))
    query.layout = Self.notes
    return ChangeSet.Precondition(query, .count(count))
  }

  @Test func pinsOfIdsAndCountsHoldExactlyWhenTheRowsDoNot() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open()
      try await store.prepare(schemas: [Self.notes])
      var setup = ChangeSet()
      for id in 1...6 {
        setup.insert(Row([.int(Int64(id)), .int(id <= 4 ? 1 : 2), .string("")]), into: "Note")
      }
      try await store.apply(setup)
      func attempt(_ preconditions: [ChangeSet.Precondition]) async throws -> CofferError? {
        var changes = ChangeSet(
          [.update(entity: "Note", row: Row([.int(6), .int(2), .string("touched")]))],
          layouts: ["Note": Self.notes])
        changes.preconditions = preconditions
        do {
          try await store.backend.apply(changes)
          return nil
        } catch let error as CofferError {
          return error
        }
      }

      #expect(try await attempt([pin(book: 1, ids: [1, 2, 3, 4]), count(book: 2, 2)]) == nil)
      // A row missing from the pin, one too many, another in its place; a count that is off.
      for wrong in [
        [try pin(book: 1, ids: [1, 2, 3])], [try pin(book: 1, ids: [1, 2, 3, 4, 5])],
        [try pin(book: 1, ids: [1, 2, 3, 5])], [count(book: 2, 1)],
        [try pin(book: 1, ids: [1, 2, 3, 4]), count(book: 2, 3)],
      ] {
        let error = try #require(try await attempt(wrong), "\(wrong) holds")
        #expect(error.code == .conflict)
        #expect(error.entity == "Note")
      }
      #expect(try await attempt([pin(book: 3, ids: []), count(book: 3, 0)]) == nil)
      #expect(
        try await store.countRows(
          Query(entity: "Note", filter: .compare(field: "body", op: .equal, value: .string("touched")))) == 1)
      try await store.close()
    }
  }
}
