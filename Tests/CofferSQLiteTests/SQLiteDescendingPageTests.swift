@_spi(Backend) import Coffer
import CofferSQLite
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// Pages sorted by a descending key read ties from the index in reverse and put them back in id
/// order; every slice must still match the reference backend, including slices that end inside
/// a run of ties (which makes the backend read the run to its end).
@Suite struct SQLiteDescendingPageTests {
  struct Event: Storable, Equatable {
    var id: Int64
    var day: Int64?
    var kind: String
    static var indexes: [Index] { [.on("day")] }
  }

  @Test func everySliceOfADescendingSortWithTiesMatchesTheReference() async throws {
    let folder = try TemporaryFolder()
    let events: [Event] = (1...40).map { (n: Int) -> Event in
      let day: Int64? = n % 6 == 0 ? nil : Int64(n % 4)
      return Event(id: Int64((n * 17) % 41), day: day, kind: "k\(n % 3)")
    }
    let sqlite = try await Store.open(
      url: "sqlite://\(folder.file("events.sqlite"))", registry: sqliteRegistry())
    let memory = try await Store.open(url: "memory:", registry: .makeBuiltIn())
    try await sqlite.insert(events)
    try await memory.insert(events)
    let orders: [[Sort]] = [
      [Sort("day", ascending: false)], [Sort("kind"), Sort("day", ascending: false)],
      [Sort("kind", ascending: false), Sort("day", ascending: false)],
    ]
    for order in orders {
      for offset in [0, 1, 5, 9, 38] {
        for limit in [0, 1, 3, 7, 12, 50] {
          let query = Query(entity: "Event", sort: order, limit: limit, offset: offset)
          #expect(
            try await sqlite.fetchRows(query) == (try await memory.fetchRows(query)),
            "sort \(order) offset \(offset) limit \(limit)")
        }
      }
      let whole = Query(entity: "Event", sort: order, offset: 3)
      #expect(
        try await sqlite.fetchRows(whole) == (try await memory.fetchRows(whole)), "sort \(order) offset 3")
    }
    try await sqlite.close()
  }
}
