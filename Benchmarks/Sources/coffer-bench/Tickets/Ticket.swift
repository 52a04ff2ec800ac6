import Coffer
import CofferMacros
import Foundation

/// The second workload: an issue tracker's tickets, shaped to cover what chat messages do not —
/// UUID ids and UUID fields, optional fields (one of them long text), a unique index, a compound
/// index queried with a sort on another field, filters no index covers, counts and sums, updates
/// of two fields and deletes by filter.
@Storable
struct Ticket: Equatable {
  var id: UUID
  /// "T-0000123": unique.
  var key: String
  /// One of 50 projects.
  var projectID: UUID
  /// 0 new, 1 triaged, 2 in progress, 3 in review, 4 closed.
  var status: Int64
  /// 0 to 3.
  var priority: Int64
  /// One of 200 people, or nobody (about one ticket in five).
  var assignee: UUID?
  var title: String
  /// About one ticket in three has a description of 600 to 1,400 bytes.
  var body: String?
  var createdAt: Date
  /// Set on closed tickets.
  var closedAt: Date?
  /// Hours, on about seven tickets in ten.
  var estimate: Double?

  static var indexes: [Index] { [.unique("key"), .on("projectID", "status"), .on("assignee")] }
}

enum TicketWorkload {
  static let projectCount = 50
  static let peopleCount = 200
  static let closed: Int64 = 4
  private static let words = [
    "login", "crash", "slow", "export", "button", "sync", "offline", "report", "search", "import", "layout",
    "timeout", "permission", "upload", "invoice", "render", "cache", "retry", "locale", "badge",
  ]

  /// The projects and people, the same in every run.
  static let projects: [UUID] = uuids(projectCount, seed: 7)
  static let people: [UUID] = uuids(peopleCount, seed: 11)

  static func uuids(_ count: Int, seed: UInt64) -> [UUID] {
    var random = SplitMix64(state: seed)
    return (0..<count).map { _ in uuid(&random) }
  }

  /// A version-4-shaped UUID from the generator.
  static func uuid(_ random: inout SplitMix64) -> UUID {
    var bytes = [UInt8](repeating: 0, count: 16)
    for half in 0..<2 {
      var word = random.next()
      for position in 0..<8 {
        bytes[half * 8 + position] = UInt8(truncatingIfNeeded: word)
        word >>= 8
      }
    }
    bytes[6] = bytes[6] & 0x0F | 0x40
    bytes[8] = bytes[8] & 0x3F | 0x80
    return UUID(
      uuid: (
        bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
        bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
      ))
  }

  /// `count` tickets, the same for the same count and seed. Times are whole microseconds, so
  /// every system stores them exactly.
  static func tickets(_ count: Int, seed: UInt64 = 2024) -> [Ticket] {
    var random = SplitMix64(state: seed)
    let start: Int64 = 1_700_000_000_000_000
    return (0..<count).map { index in
      func sentence(_ bytes: Int) -> String {
        var text = ""
        while text.utf8.count < bytes { text += words[random.below(words.count)] + " " }
        return String(text.prefix(bytes))
      }
      let created = start + Int64(index) * 1_000_000 + Int64(random.below(1_000_000))
      let status = Int64(random.below(5))
      let title = sentence(24 + random.below(40))
      return Ticket(
        id: uuid(&random), key: "T-" + String(format: "%07d", index + 1),
        projectID: projects[random.below(projectCount)], status: status, priority: Int64(random.below(4)),
        assignee: random.below(5) == 0 ? nil : people[random.below(peopleCount)], title: title,
        body: random.below(3) == 0 ? sentence(600 + random.below(800)) : nil,
        createdAt: date(created),
        closedAt: status == closed
          ? date(created + 86_400_000_000 + Int64(random.below(1_000_000_000))) : nil,
        estimate: random.below(10) < 7 ? Double(1 + random.below(80)) / 2 : nil)
    }
  }

  /// A date from whole microseconds since 1970.
  static func date(_ microseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(microseconds) / 1e6)
  }

  /// Whole microseconds since 1970 of a date made by ``date(_:)``.
  static func microseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1e6).rounded()) }
}
