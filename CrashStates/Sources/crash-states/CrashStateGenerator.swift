/// SplitMix64: a small deterministic generator, so that a seed names a whole run.
struct SeededGenerator: RandomNumberGenerator {
  private var state: UInt64

  /// A generator that starts from `seed`.
  init(seed: UInt64) { state = seed }

  /// The next 64 random bits.
  mutating func next() -> UInt64 {
    state &+= 0x9e37_79b9_7f4a_7c15
    var value = state
    value = (value ^ (value >> 30)) &* 0xbf58_476d_1ce4_e5b9
    value = (value ^ (value >> 27)) &* 0x94d0_49bb_1331_11eb
    return value ^ (value >> 31)
  }
}

/// One file state a power cut could leave, and how it was made.
struct CrashState {
  /// How the pending changes were chosen: `none`, `all`, `prefix`, `subset`, `sectors`,
  /// `torn`, `data-only` or `names-only`.
  var strategy: String
  /// The files.
  var image: FileImage
}

/// Builds the file states a power cut at a crash point could leave: the durable files plus some
/// of the pending changes, each write possibly torn at 512-byte sector boundaries.
///
/// The pending changes that reach the disk are applied in the order they were made. A later
/// change may reach it without an earlier one (that is the reordering a disk and the page
/// cache allow), but where two writes overlap, the later one's bytes never come before the
/// earlier one's: writeback only ever sends a sector's newer contents.
enum CrashStateGenerator {
  /// Which pieces of each pending change reach the disk (all `false`: none of it).
  typealias Selection = [[Bool]]

  /// The states for a crash point: none and all of the pending changes, then `variants` rounds
  /// of a torn in-order prefix, a random subset of whole changes, a random subset of sectors and
  /// one torn write among whole changes, and (once) the data changes without the name changes
  /// and the other way round.
  static func states(at point: CrashPoint, variants: Int, random: inout SeededGenerator) -> [CrashState] {
    let pending = point.pending
    let pieces = pending.map(\.pieceCount)
    func make(_ strategy: String, _ selection: Selection) -> CrashState {
      var image = point.durable
      for (index, change) in pending.enumerated() {
        let keep = selection[index]
        guard keep.contains(true) else { continue }
        if keep.allSatisfy({ $0 }) { image.apply(change) } else { image.apply(change, sectors: keep) }
      }
      return CrashState(strategy: strategy, image: image)
    }
    func uniform(_ value: Bool) -> Selection { pieces.map { Array(repeating: value, count: $0) } }
    guard !pending.isEmpty else { return [make("none", [])] }
    var states = [make("none", uniform(false)), make("all", uniform(true))]
    let writes = pending.indices.filter { pieces[$0] > 1 }
    for _ in 0..<variants {
      // A torn in-order prefix: everything before a cut, the cut change's first sectors.
      let cut = Int.random(in: 0..<pending.count, using: &random)
      let cutPiece = Int.random(in: 0...pieces[cut], using: &random)
      states.append(
        make(
          "prefix",
          pieces.indices.map { index in
            (0..<pieces[index]).map { piece in index < cut || (index == cut && piece < cutPiece) }
          }))
      states.append(
        make(
          "subset",
          pieces.map { count in Array(repeating: Bool.random(using: &random), count: count) }))
      states.append(
        make("sectors", pieces.map { count in (0..<count).map { _ in Bool.random(using: &random) } }))
      if let torn = writes.randomElement(using: &random) {
        states.append(
          make(
            "torn",
            pieces.indices.map { index in
              (0..<pieces[index]).map { _ in index != torn || Bool.random(using: &random) }
            }))
      }
    }
    if pending.contains(where: \.isData), pending.contains(where: { !$0.isData }) {
      states.append(
        make("data-only", pending.indices.map { Array(repeating: pending[$0].isData, count: pieces[$0]) }))
      states.append(
        make("names-only", pending.indices.map { Array(repeating: !pending[$0].isData, count: pieces[$0]) }))
    }
    return states
  }
}
