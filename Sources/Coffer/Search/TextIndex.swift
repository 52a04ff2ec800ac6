/// An inverted index of one String field of an entity's rows: for each word (``TextTokenizer``),
/// the rows whose field holds it and how many times; each row's length in words; and the totals
/// BM25 needs (``TextRanking/FieldStatistics``). A value type, kept in step with the rows of an
/// ``InMemoryTable`` in the same change, so a copy of the table is a copy of its index.
///
/// Rows are numbered by slots, given in increasing order and never reused, so each word's rows
/// (its ``Postings``) are two parallel arrays sorted by slot, to which an insert appends: a
/// search intersects or merges sorted arrays instead of probing dictionaries. A deleted or
/// updated row's slot dies: its postings stay until there are as many dead ones as live ones
/// in a word's arrays, or dead slots outnumber live ones in the index, and then are swept. A
/// row whose field is null has no slot and counts in no statistic, as in the scan.
struct TextIndex: Sendable {
  /// One word's rows: their slots in increasing order, and how many times the word occurs in
  /// each; some of the slots may be dead (``TextIndex/lengths`` is -1 there).
  struct Postings: Sendable {
    var slots: [Int32] = []
    var counts: [Int32] = []
    /// How many of ``slots`` are dead.
    var dead = 0
  }

  /// The indexed field's position in the row.
  let position: Int
  /// Each indexed row's slot, by id.
  private(set) var slots: [Value: Int32] = [:]
  /// Each slot's row id (``Value/null`` when the slot is dead).
  private(set) var ids: [Value] = []
  /// Each slot's length in words (-1 when the slot is dead).
  private(set) var lengths: [Int32] = []
  /// How many slots are dead.
  private var deadSlots = 0
  /// Each word's number in ``postings``.
  private(set) var words: [TextToken: Int32] = [:]
  /// Each word's rows, by the word's number.
  private(set) var postings: [Postings] = []
  /// Rows with a text and their words together.
  private(set) var statistics = TextRanking.FieldStatistics()

  init(position: Int) { self.position = position }

  /// Brings the index from the row with an id being `old` to its being `new` (either may be
  /// absent: an insert or a delete).
  mutating func update(id: Value, old: Row?, new: Row?) {
    let before = old.flatMap { Self.text($0[position]) }
    let after = new.flatMap { Self.text($0[position]) }
    if let before, let after, before.utf8.elementsEqual(after.utf8) { return }
    if let before, let slot = slots.removeValue(forKey: id) {
      statistics.words -= Int(lengths[Int(slot)])
      statistics.rows -= 1
      ids[Int(slot)] = .null
      lengths[Int(slot)] = -1
      deadSlots += 1
      for (word, _) in Self.countedWords(before) {
        guard let number = words[word] else { continue }
        postings[Int(number)].dead += 1
        sweepIfMostlyDead(Int(number))
      }
    }
    if let after {
      let slot = Int32(ids.count)
      ids.append(id)
      slots[id] = slot
      var length: Int32 = 0
      for (word, count) in Self.countedWords(after) {
        let number: Int
        if let known = words[word] {
          number = Int(known)
        } else {
          number = postings.count
          words[word] = Int32(number)
          postings.append(Postings())
        }
        postings[number].slots.append(slot)
        postings[number].counts.append(count)
        length += count
      }
      lengths.append(length)
      statistics.rows += 1
      statistics.words += Int(length)
    }
    if deadSlots > 1024 && deadSlots > ids.count / 2 { renumber() }
  }

  /// Sweeps a word's dead postings once they are as many as its live ones.
  private mutating func sweepIfMostlyDead(_ number: Int) {
    let list = postings[number]
    guard list.dead > 16 && list.dead * 2 >= list.slots.count else { return }
    var swept = Postings()
    swept.slots.reserveCapacity(list.slots.count - list.dead)
    swept.counts.reserveCapacity(list.slots.count - list.dead)
    for (slot, count) in zip(list.slots, list.counts) where lengths[Int(slot)] >= 0 {
      swept.slots.append(slot)
      swept.counts.append(count)
    }
    postings[number] = swept
  }

  /// Gives the live rows slots 0, 1, … in their order, dropping every dead posting.
  private mutating func renumber() {
    var renumbered = Array(repeating: Int32(-1), count: ids.count)
    var liveIDs: [Value] = []
    var liveLengths: [Int32] = []
    liveIDs.reserveCapacity(ids.count - deadSlots)
    liveLengths.reserveCapacity(ids.count - deadSlots)
    for slot in ids.indices where lengths[slot] >= 0 {
      renumbered[slot] = Int32(liveIDs.count)
      slots[ids[slot]] = Int32(liveIDs.count)
      liveIDs.append(ids[slot])
      liveLengths.append(lengths[slot])
    }
    for number in postings.indices {
      let list = postings[number]
      var moved = Postings()
      moved.slots.reserveCapacity(list.slots.count - list.dead)
      moved.counts.reserveCapacity(list.slots.count - list.dead)
      for (slot, count) in zip(list.slots, list.counts) where renumbered[Int(slot)] >= 0 {
        moved.slots.append(renumbered[Int(slot)])
        moved.counts.append(count)
      }
      postings[number] = moved
    }
    ids = liveIDs
    lengths = liveLengths
    deadSlots = 0
  }

  /// Whether a slot holds a row.
  func isLive(_ slot: Int32) -> Bool { lengths[Int(slot)] >= 0 }

  /// The text of a field's value, or `nil` for a null (or a value of another kind, which a
  /// text-indexed field never holds).
  static func text(_ value: Value) -> String? {
    if case .string(let text) = value { return text }
    return nil
  }

  /// The distinct words of a text, each with how many times it occurs.
  static func countedWords(_ text: String) -> [(TextToken, Int32)] {
    var words = TextTokenizer.tokens(text)
    guard !words.isEmpty else { return [] }
    words.sort()
    var counted: [(TextToken, Int32)] = []
    counted.reserveCapacity(words.count)
    for word in words {
      if let last = counted.last, last.0 == word {
        counted[counted.count - 1].1 += 1
      } else {
        counted.append((word, 1))
      }
    }
    return counted
  }
}
