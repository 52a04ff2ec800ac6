@_spi(Backend) import Coffer
import CofferMacros
import CofferTestSupport
import Foundation
import Testing

@testable import CofferLMDB

/// A model read in place (`@Storable`'s `init(_storedRow:)`), beside `Note`, which is read
/// through Codable.
@Storable struct Memo: Equatable {
  var id: Int64
  var title: String
  var body: String
}

/// A stored string whose bytes are not UTF-8 is an error naming the row, on every read path;
/// the other rows still read.
@Suite struct LMDBDamagedTextTests {
  /// Replaces the first occurrence of `text`'s bytes in the row stored under `id` with bytes
  /// of the same length that are not UTF-8.
  private func garble(_ text: String, id: Int64, entity: String, in backend: LMDBBackend) throws {
    let rows = try backend.handle(entity).rows
    try backend.environment.write { transaction in
      let key = KeyEncoding.idKey(.int(id))
      var bytes = Array(try #require(try transaction.get(rows, key)))
      let target = Array(text.utf8)
      let start = try #require(
        bytes.indices.first { bytes[$0...].starts(with: target) }, "the row holds \(text)")
      bytes[start] = 0xFF
      try transaction.put(rows, key, bytes)
    }
  }

  private func isDamagedText(_ error: any Error, id: String, field: String) -> Bool {
    guard let error = error as? CofferError else { return false }
    return error.code == .corruptStore && error.id == id && error.message.contains("'\(field)'")
      && error.message.contains("not UTF-8")
  }

  @Test func inPlaceReadsReportTheRow() async throws {
    let folder = try TemporaryFolder()
    let backend = try LMDBBackend(path: folder.path)
    let store = Store(backend: backend)
    let memos = (1...3).map {
      Memo(id: $0, title: "title \($0)", body: "a body long enough to be stored apart \($0)")
    }
    try await store.insert(memos)
    try garble("body long", id: 2, entity: "Memo", in: backend)
    await #expect { _ = try await store.get(Memo.self, id: 2) } throws: {
      isDamagedText($0, id: "2", field: "body")
    }
    await #expect { _ = try await store.all(Memo.self) } throws: { isDamagedText($0, id: "2", field: "body") }
    await #expect {
      _ = try await store.query(Memo.self).fetch()
    } throws: { isDamagedText($0, id: "2", field: "body") }
    #expect(try await store.get(Memo.self, ids: [1, 3]) == [memos[0], memos[2]])
    try await store.close()
  }

  @Test func decodedRowsReportTheRow() async throws {
    let folder = try TemporaryFolder()
    let backend = try LMDBBackend(path: folder.path)
    let store = Store(backend: backend)
    try await store.insert((1...3).map(sampleNote))
    try garble("note 2", id: 2, entity: "Note", in: backend)
    await #expect { _ = try await store.get(Note.self, id: 2) } throws: {
      isDamagedText($0, id: "2", field: "text")
    }
    await #expect {
      _ = try await store.fetchRows(Query(entity: "Note"))
    } throws: { isDamagedText($0, id: "2", field: "text") }
    #expect(try await store.get(Note.self, ids: [1, 3]) == [sampleNote(1), sampleNote(3)])
    try await store.close()
  }
}
