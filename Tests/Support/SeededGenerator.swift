/// A seeded random generator (SplitMix64): the same seed gives the same sequence, so a test that
/// draws from it repeats its failure.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
  /// Where the sequence is.
  public var state: UInt64

  /// The sequence of `seed`.
  public init(seed: UInt64) { state = seed }

  /// The next number.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number in `0..<bound`.
  public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
