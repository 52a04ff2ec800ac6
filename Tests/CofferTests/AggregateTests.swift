@_spi(Backend) import Coffer
import CofferMemory
import Foundation
import Testing

/// A ticket with a narrow integer, a float and an enum, to aggregate through the typed API.
struct Ticket: Storable, KeyPathStorable, Equatable {
  enum Status: String, Codable, Sendable, CaseIterable { case open, closed, waiting }

  var id: Int64
  var status: Status
  var owner: Status?
  var points: Int32
  var weight: Float

  static func storedFieldName(for keyPath: PartialKeyPath<Ticket>) -> String? {
    switch keyPath {
    case \Ticket.id: "id"
    case \Ticket.status: "status"
    case \Ticket.owner: "owner"
    case \Ticket.points: "points"
    case \Ticket.weight: "weight"
    default: nil
    }
  }
}

@Suite struct AggregateTests {
  private func store(_ tickets: [Ticket]) async throws -> Store {
    let store = Store(backend: MemoryBackend())
    try await store.insert(tickets)
    return store
  }

  @Test func groupsByAnEnumInRawValueOrderWithNilFirst() async throws {
    let store = try await store([
      Ticket(id: 1, status: .waiting, owner: nil, points: 1, weight: 0.5),
      Ticket(id: 2, status: .open, owner: .closed, points: 2, weight: 1),
      Ticket(id: 3, status: .closed, owner: nil, points: 3, weight: 2),
      Ticket(id: 4, status: .open, owner: .open, points: 4, weight: 4),
    ])
    let byStatus = try await store.query(Ticket.self).group(by: \.status).sum(\.points)
    #expect(
      byStatus == [
        AggregateGroup(key: .closed, value: 3), .init(key: .open, value: 6), .init(key: .waiting, value: 1),
      ])
    let byOwner = try await store.query(Ticket.self).group(by: \.owner).count()
    #expect(byOwner.map(\.key) == [nil, .closed, .open])
    #expect(byOwner.map(\.value) == [2, 1, 1])
    #expect(try await store.query(Ticket.self).sum(\.weight) == Float(7.5))
    #expect(try await store.query(Ticket.self).max(\.points) == 4)
  }

  @Test func aSumThatDoesNotFitThePropertyTypeIsOutOfRange() async throws {
    let store = try await store([
      Ticket(id: 1, status: .open, owner: nil, points: .max, weight: 0),
      Ticket(id: 2, status: .open, owner: nil, points: 1, weight: 0),
    ])
    let error = await #expect(throws: CofferError.self) { try await store.query(Ticket.self).sum(\.points) }
    #expect(error?.code == .valueOutOfRange)
    #expect(error?.field == "points")
    #expect(try await store.query(Ticket.self).filter(FieldRef("id") == 1).sum(\.points) == .max)
  }

  @Test func aKeyPathThatReadsNoStoredFieldIsAnInvalidQuery() async throws {
    let store = try await store([Ticket(id: 1, status: .open, owner: nil, points: 1, weight: 0)])
    let extreme = await #expect(throws: CofferError.self) {
      try await store.query(Ticket.self).max(\.points.magnitude)
    }
    #expect(extreme?.code == .invalidQuery)
    let grouped = await #expect(throws: CofferError.self) {
      try await store.query(Ticket.self).group(by: \.points.magnitude).count()
    }
    #expect(grouped?.code == .invalidQuery)
  }

  @Test func aSnapshotAggregatesTheStateItBeganWith() async throws {
    let store = try await store([Ticket(id: 1, status: .open, owner: nil, points: 5, weight: 0)])
    guard store.backend is any SnapshotReading else { return }
    try await store.snapshot { snapshot in
      try await store.insert(Ticket(id: 2, status: .open, owner: nil, points: 7, weight: 0))
      #expect(try await snapshot.query(Ticket.self).sum(\.points) == 5)
    }
    #expect(try await store.query(Ticket.self).sum(\.points) == 12)
  }
}
