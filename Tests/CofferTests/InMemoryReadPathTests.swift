@_spi(Backend) import Coffer
import Testing

/// The two reads `InMemoryTables` answers without planning: a read of one id
/// (`lookUp(_:found:)`, which the memory backend calls under its lock instead of taking a
/// snapshot) and a scan of every row in id order, handed over as the walk reaches each row.
/// Each must take only the queries it can answer, and answer them as the whole query would.
@Suite struct InMemoryReadPathTests {
  let schema: EntitySchema
  var tables = InMemoryTables()

  init() throws {
    schema = try EntitySchema(
      name: "Pet", fields: [Field("id", .int), Field("name", .string)], idField: "id", indexes: [.on("name")])
    try tables.prepare([schema])
    var changes = ChangeSet()
    changes.insert(Row([2, "Tom"]), into: "Pet")
    changes.insert(Row([1, "Rex"]), into: "Pet")
    changes.insert(Row([3, "Ada"]), into: "Pet")
    _ = try tables.apply(changes)
  }

  @Test func aStoredIDGivesItsRowAndAMissingOneGivesNone() throws {
    var found: Row? = Row([0, "left alone"])
    #expect(try tables.lookUp(Query(lookingUp: .int(2), in: schema), found: &found))
    #expect(found == Row([2, "Tom"]))
    #expect(try tables.lookUp(Query(lookingUp: .int(9), in: schema), found: &found))
    #expect(found == nil)
  }

  @Test func anyOtherReadIsLeftToTheWholeQuery() throws {
    let others = [
      Query(entity: "Pet", filter: .compare(field: "name", op: .equal, value: "Rex")),
      Query(entity: "Pet", filter: .compare(field: "id", op: .equal, value: .int(1)), limit: 1),
      Query(entity: "Pet", filter: .compare(field: "id", op: .equal, value: .int(1)), sort: [Sort("name")]),
      Query(entity: "Pet", filter: .isIn("id", [.int(1), .int(2)])),
      Query(entity: "Pet"),
    ]
    for query in others {
      var found: Row? = Row([0, "left alone"])
      #expect(try tables.lookUp(query, found: &found) == false)
      #expect(found == Row([0, "left alone"]))
    }
  }

  @Test func aReaderOfAnotherLayoutGetsTheRowInItsLayout() throws {
    let older = try EntitySchema(
      name: "Pet", fields: [Field("id", .int), Field("name", .string), Field("age", .int, isOptional: true)],
      idField: "id")
    var found: Row?
    #expect(try tables.lookUp(Query(lookingUp: .int(1), in: older), found: &found))
    #expect(found == Row([1, "Rex", nil]))
  }

  @Test func anUnknownEntityIsAnError() {
    var found: Row?
    #expect {
      _ = try tables.lookUp(
        Query(entity: "Cat", filter: .compare(field: "id", op: .equal, value: .int(1))), found: &found)
    } throws: { ($0 as? CofferError)?.code == .unknownEntity }
  }

  @Test func onlyAWholeReadInIDOrderIsAScan() {
    let scans = [Query(entity: "Pet"), Query(entity: "Pet", sort: [Sort("id")])]
    for query in scans { #expect(query.readsEveryRowInIDOrder(of: schema)) }
    let others = [
      Query(entity: "Pet", filter: .compare(field: "name", op: .notEqual, value: "Tom")),
      Query(entity: "Pet", sort: [Sort("id", ascending: false)]),
      Query(entity: "Pet", sort: [Sort("name")]),
      Query(entity: "Pet", sort: [Sort("id"), Sort("name")]),
      Query(entity: "Pet", limit: 2),
      Query(entity: "Pet", offset: 1),
    ]
    for query in others { #expect(query.readsEveryRowInIDOrder(of: schema) == false) }
  }

  @Test func aScanHandsOverEveryRowInIDOrderInTheReadersLayout() throws {
    var read: [Row] = []
    try tables.read(Query(entity: "Pet")) { read.append(try Row($0)) }
    #expect(read == [Row([1, "Rex"]), Row([2, "Tom"]), Row([3, "Ada"])])

    let older = try EntitySchema(
      name: "Pet", fields: [Field("id", .int), Field("name", .string), Field("age", .int, isOptional: true)],
      idField: "id")
    var query = Query(entity: "Pet")
    query.layout = older
    read = []
    try tables.read(query) { read.append(try Row($0)) }
    #expect(read == [Row([1, "Rex", nil]), Row([2, "Tom", nil]), Row([3, "Ada", nil])])
  }
}
