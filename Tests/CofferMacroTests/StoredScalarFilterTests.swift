@_spi(Backend) import Coffer
import CofferMacros
import CofferMemory
import Foundation
import Testing

/// An enum with an integer raw value that declares nothing about filters (`CaseIterable` is what
/// schema derivation asks of an enum).
enum Priority: Int, Codable, Sendable, CaseIterable { case low = 1, normal, high }

/// A model whose properties are scalars that had no filter conformance of their own before.
@Storable
struct Ticket: Hashable {
  var id: Int64
  var priority: Priority
  var previous: Priority?
  var link: URL
  var size: UInt
  var total: UInt64
}

/// Three tickets, of low, high and normal priority.
private func storeWithTickets() async throws -> Store {
  let store = Store(backend: MemoryBackend())
  try await store.insert([
    Ticket(
      id: 1, priority: .low, previous: nil, link: try #require(URL(string: "https://a.example/1")), size: 1,
      total: 10),
    Ticket(
      id: 2, priority: .high, previous: .low, link: try #require(URL(string: "https://a.example/2")), size: 2,
      total: 20),
    Ticket(
      id: 3, priority: .normal, previous: .high, link: try #require(URL(string: "https://a.example/3")),
      size: 3,
      total: 30),
  ])
  return store
}

/// The ids a query selects, in its order.
private func ids(_ query: StoreQuery<Ticket>) async throws -> [Int64] { try await query.fetch().map(\.id) }

@Suite struct StoredScalarFilters {
  @Test func anEnumWithARawValueComparesByItWithNothingDeclared() async throws {
    let tickets = try await storeWithTickets().query(Ticket.self)
    #expect(try await ids(tickets.filter(\.priority == .high)) == [2])
    #expect(try await ids(tickets.filter(\.priority != .high)) == [1, 3])
    #expect(try await ids(tickets.filter(\.priority >= .normal)) == [2, 3])
    #expect(try await ids(tickets.filter(\.priority < .normal)) == [1])
    #expect(try await ids(tickets.filter(\.previous == nil)) == [1])
    #expect(try await ids(tickets.filter(\.previous == .low)) == [2])
    #expect(try await ids(tickets.filter(.isIn(\.priority, [.low, .high]))) == [1, 2])
    #expect(try await ids(tickets.filter(.isIn(\.previous, [nil, .high]))) == [1, 3])
    #expect(try await ids(tickets.sort(\.priority, .descending)) == [2, 3, 1])
    #expect(try await ids(tickets.sort(\.previous)) == [1, 2, 3])
  }

  @Test func urlsAndUnsignedIntegersCompareAsTheyAreStored() async throws {
    let tickets = try await storeWithTickets().query(Ticket.self)
    #expect(
      try await ids(tickets.filter(\.link == (try #require(URL(string: "https://a.example/2"))))) == [2])
    #expect(try await ids(tickets.filter(\.size >= 2)) == [2, 3])
    #expect(try await ids(tickets.filter(\.total < 25)) == [1, 2])
    #expect(try await ids(tickets.filter(FieldRef("total") == UInt64(30))) == [3])
    #expect(try await ids(tickets.sort(\.total, .descending)) == [3, 2, 1])
  }

  @Test func anUnsignedIntegerNoStoredIntegerEqualsMakesTheQueryFail() async throws {
    let tickets = try await storeWithTickets().query(Ticket.self)
    await #expect(throws: CofferError.self) { try await tickets.filter(\.total == UInt64.max).fetch() }
  }
}
