import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Keeps the memory map still while transactions use it.
///
/// LMDB may change the map's size (`mdb_env_set_mapsize`) only while no transaction of the
/// process is running. Every transaction holds the gate shared; a resize or close holds it
/// exclusively, waiting for running transactions to end and holding new ones back. Shared entry
/// is one atomic compare-and-swap; waiting (which happens only around a resize) sleeps briefly.
final class MapGate: Sendable {
  private static let closedBit = 1 << 62
  /// The number of shared holders, with ``closedBit`` set while someone holds it exclusively.
  private let state = Atomic<Int>(0)

  /// Enters shared; waits while the gate is held exclusively.
  func enterShared() {
    while true {
      let current = state.load(ordering: .relaxed)
      if current & Self.closedBit == 0 {
        if state.compareExchange(expected: current, desired: current + 1, ordering: .acquiring).exchanged {
          return
        }
      } else {
        usleep(50)
      }
    }
  }

  /// Leaves shared.
  func leaveShared() { state.subtract(1, ordering: .releasing) }

  /// Runs `body` with no transaction running in this process.
  func exclusive<R>(_ body: () throws -> R) rethrows -> R {
    while true {
      let current = state.load(ordering: .relaxed)
      if current & Self.closedBit == 0,
        state.compareExchange(expected: current, desired: current | Self.closedBit, ordering: .acquiring)
          .exchanged
      {
        break
      }
      usleep(50)
    }
    while state.load(ordering: .acquiring) != Self.closedBit { usleep(50) }
    defer { state.store(0, ordering: .releasing) }
    return try body()
  }
}
