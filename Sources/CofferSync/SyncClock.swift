@_spi(Backend) import Coffer
import Foundation

/// A hybrid logical clock reading: wall-clock microseconds, a counter for readings within one
/// microsecond or behind a clock seen from another replica, and the replica that made it.
///
/// Readings are totally ordered — by time, then counter, then replica — so two replicas that
/// changed the same field always agree on which change came last.
public struct SyncClock: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// Microseconds since 1970, never behind any reading this replica has made or seen.
  public var physical: Int64
  /// Orders readings that share ``physical``.
  public var logical: Int64
  /// The replica that made the reading.
  public var replica: String

  /// A reading.
  public init(physical: Int64, logical: Int64, replica: String) {
    self.physical = physical
    self.logical = logical
    self.replica = replica
  }

  /// Orders readings by time, counter, then replica.
  public static func < (lhs: SyncClock, rhs: SyncClock) -> Bool {
    if lhs.physical != rhs.physical { return lhs.physical < rhs.physical }
    if lhs.logical != rhs.logical { return lhs.logical < rhs.logical }
    return lhs.replica.utf8.lexicographicallyPrecedes(rhs.replica.utf8)
  }

  /// `physical.logical@replica`.
  public var description: String { "\(physical).\(logical)@\(replica)" }
}

/// A replica's clock: each reading after every reading it made or received before.
struct HybridClock: Sendable {
  let replica: String
  var last: SyncClock
  let wall: @Sendable () -> Int64

  init(replica: String, physical: Int64, logical: Int64, wall: @escaping @Sendable () -> Int64) {
    self.replica = replica
    self.last = SyncClock(physical: physical, logical: logical, replica: replica)
    self.wall = wall
  }

  /// A new reading, after every one before.
  mutating func tick() -> SyncClock {
    let now = wall()
    if now > last.physical {
      last = SyncClock(physical: now, logical: 0, replica: replica)
    } else {
      last = SyncClock(physical: last.physical, logical: last.logical + 1, replica: replica)
    }
    return last
  }

  /// Takes in a reading from another replica, so that later readings here come after it.
  mutating func observe(_ other: SyncClock) {
    if other.physical > last.physical || (other.physical == last.physical && other.logical > last.logical) {
      last = SyncClock(physical: other.physical, logical: other.logical, replica: replica)
    }
  }

  /// The wall clock in microseconds since 1970.
  static let systemWall: @Sendable () -> Int64 = { Value.microsecondsNow() }
}

extension Value {
  /// Now, in microseconds since 1970.
  static func microsecondsNow() -> Int64 { Value.microseconds(since1970: Date()) }
}
