/// A deterministic stream of small numbers for the tests that make random changes: the same
/// seed gives the same sequence on every machine and every run.
struct SeededNumbers {
  var state: UInt64

  init(state: UInt64) { self.state = state }

  /// The next number in `0..<bound`.
  mutating func below(_ bound: Int) -> Int {
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return Int((state >> 33) % UInt64(bound))
  }
}
