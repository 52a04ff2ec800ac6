@_spi(Backend) import Coffer
import Foundation
import Testing

/// How the core measures ids and index entries: LMDB's key bytes, zero bytes counting twice.
@Suite struct KeySizeTests {
  let schema = try! EntitySchema(
    name: "Tag",
    fields: [Field("id", .string), Field("name", .string), Field("blob", .bytes), Field("rank", .int)],
    idField: "id", indexes: [.on("name"), .on("blob", "rank")])

  func row(id: String = "t", name: String = "n", blob: Data = Data(), rank: Int64 = 0) -> Row {
    Row([.string(id), .string(name), .bytes(blob), .int(rank)])
  }

  @Test func sizesOfEachKind() {
    #expect(KeySize.of(.null) == 1)
    #expect(KeySize.of(.bool(true)) == 2)
    #expect(KeySize.of(.int(5)) == 9)
    #expect(KeySize.of(.date(Date())) == 9)
    #expect(KeySize.of(.uuid(UUID())) == 17)
    #expect(KeySize.of(.string("abc")) == 6)
    #expect(KeySize.of(.string("a\u{0}b")) == 7)
    #expect(KeySize.of(.bytes(Data([0, 0, 1]))) == 8)
  }

  @Test func zeroBytesCountTwice() throws {
    let fits = String(repeating: "\u{0}", count: 254)
    _ = try QueryValidator.validate(row(name: fits), schema: schema)
    let error = #expect(throws: CofferError.self) {
      try QueryValidator.validate(row(name: fits + "\u{0}"), schema: schema)
    }
    #expect(error?.code == .invalidValue)
    #expect(error?.field == "name")
    #expect(error?.idValue == .string("t"))
  }

  @Test func anEntryOfSeveralFieldsCountsThemAll() throws {
    // 3 + 499 bytes of blob and 9 for the rank: 511.
    _ = try QueryValidator.validate(row(blob: Data(repeating: 1, count: 499)), schema: schema)
    let error = #expect(throws: CofferError.self) {
      try QueryValidator.validate(row(blob: Data(repeating: 1, count: 500)), schema: schema)
    }
    #expect(error?.field == "blob,rank")
  }

  @Test func aLongIDIsNamedByItsFieldNotItsValue() {
    let error = #expect(throws: CofferError.self) {
      try QueryValidator.validate(row(id: String(repeating: "i", count: 509)), schema: schema)
    }
    #expect(error?.field == "id")
    #expect(error?.id == nil)
    #expect(error?.message.contains("iiii") == false)
  }
}
