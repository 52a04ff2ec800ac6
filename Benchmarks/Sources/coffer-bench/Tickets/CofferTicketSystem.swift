import Coffer
import CofferStores
import Foundation

/// A Coffer backend in the ticket workload, reached the way an app reaches it: a store URL and
/// the typed API.
final class CofferTicketSystem: TicketSystem {
  let name: String
  /// The scheme of the store URL; the store is a file or folder named `file`, or `memory:`.
  private let scheme: String
  private let file: String
  private var store: Store?
  private var path = ""

  init(name: String, scheme: String, file: String) {
    self.name = name
    self.scheme = scheme
    self.file = file
  }

  private var open: Store {
    get throws {
      guard let store else { throw BenchError("\(name): no store is open") }
      return store
    }
  }

  func create(in folder: String) async throws {
    try await close()
    path = file.isEmpty ? "" : folder + "/" + file
    let url = file.isEmpty ? "memory:tickets-\(UUID().uuidString)" : "\(scheme)://\(path)"
    let store = try await Store.open(url: url, registry: .makeBuiltIn())
    try await store.prepare([Ticket.self])
    self.store = store
  }

  func insert(_ tickets: [Ticket]) async throws { try await open.insert(tickets) }

  func get(_ id: UUID) async throws -> Ticket? { try await open.get(Ticket.self, id: id) }

  func ticket(key: String) async throws -> Ticket? {
    try await open.query(Ticket.self).filter(\.key == key).first()
  }

  func projectPage(_ project: UUID, status: Int64) async throws -> [Ticket] {
    try await open.query(Ticket.self).filter(\.projectID == project && \.status == status)
      .sort(\.createdAt, .descending).limit(50).fetch()
  }

  func urgent() async throws -> [Ticket] {
    try await open.query(Ticket.self).filter(\.priority == 3 && \.estimate > 20.0)
      .sort(\.createdAt, .descending).limit(100).fetch()
  }

  func assignedCount(_ person: UUID) async throws -> Int {
    try await open.query(Ticket.self).filter(\.assignee == person).count()
  }

  func openEstimate(_ project: UUID) async throws -> Double {
    try await open.query(Ticket.self).filter(\.projectID == project && \.status < TicketWorkload.closed)
      .sum(\.estimate) ?? 0
  }

  func scan() async throws -> [Ticket] { try await open.all(Ticket.self) }

  /// What an app holding the values does: changes two properties and writes the values back.
  func close(_ tickets: [Ticket], at date: Date) async throws {
    try await open.batch { batch in for ticket in tickets { try batch.update(ticket.closed(at: date)) } }
  }

  func deleteClosed(of project: UUID) async throws -> Int {
    try await open.query(Ticket.self).filter(\.projectID == project && \.status == TicketWorkload.closed)
      .delete()
  }

  func fileSize() -> Int64 {
    guard !path.isEmpty else { return 0 }
    return scheme == "sqlite" ? sqliteSize(path) : diskUsage(path)
  }

  func close() async throws {
    if let store { try await store.close() }
    store = nil
  }
}
