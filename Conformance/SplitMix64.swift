/// A small, fast, seeded pseudo-random generator (SplitMix64), so that a randomized check can be
/// replayed exactly from its seed on every platform.
struct SplitMix64: RandomNumberGenerator {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number in `0..<bound` (bound > 0).
  mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

  /// True with the given probability in percent.
  mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

  /// A random element of a non-empty array.
  mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}
