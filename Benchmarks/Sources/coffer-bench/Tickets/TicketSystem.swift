import Foundation

/// One system under test in the ticket workload. Every system does the same work on the same
/// tickets, and reads hand back `Ticket` values, so each read includes decoding.
protocol TicketSystem: AnyObject {
  /// The name in tables.
  var name: String { get }
  /// Creates a new, empty store in `folder`, closing any previous one.
  func create(in folder: String) async throws
  /// Inserts every ticket in one batch (one transaction).
  func insert(_ tickets: [Ticket]) async throws
  /// One lookup by id.
  func get(_ id: UUID) async throws -> Ticket?
  /// One lookup by the unique `key`.
  func ticket(key: String) async throws -> Ticket?
  /// The newest 50 tickets of a project in a status (the compound index, sorted on another
  /// field): `projectID = ? AND status = ?`, newest `createdAt` first, ties by id.
  func projectPage(_ project: UUID, status: Int64) async throws -> [Ticket]
  /// The newest 100 urgent tickets with a large estimate, which no index covers:
  /// `priority = 3 AND estimate > 20`, newest first, ties by id.
  func urgent() async throws -> [Ticket]
  /// How many tickets a person is assigned (an indexed equality).
  func assignedCount(_ person: UUID) async throws -> Int
  /// The estimates of a project's open tickets added up: `projectID = ? AND status < 4`.
  func openEstimate(_ project: UUID) async throws -> Double
  /// Every ticket, in id order.
  func scan() async throws -> [Ticket]
  /// Closes the tickets: each gets `status` 4 and `closedAt` (two fields), in one batch.
  func close(_ tickets: [Ticket], at date: Date) async throws
  /// Deletes a project's closed tickets; returns how many.
  func deleteClosed(of project: UUID) async throws -> Int
  /// Bytes the store occupies on disk (0 for a memory store).
  func fileSize() -> Int64
  /// Closes the store.
  func close() async throws
  /// How many microseconds a date read back may be from the one written (0: exact).
  var dateError: Int64 { get }
}

extension TicketSystem {
  var dateError: Int64 { 0 }
}

extension Ticket {
  /// The ticket closed at `date`: what every system writes for ``TicketSystem/close(_:at:)``.
  func closed(at date: Date) -> Ticket {
    var ticket = self
    ticket.status = TicketWorkload.closed
    ticket.closedAt = date
    return ticket
  }
}
