/// An inverted index of one String field of an entity's rows: for each word (``TextTokenizer``),
/// the rows whose field holds it and how many times; each row's length in words; and the totals
/// BM25 needs (``TextRanking/FieldStatistics``). A value type, kept in step with the rows of an
/// ``InMemoryTable`` in the same change, so a copy of the table is a copy of its index.
///
/// Rows are numbered by slots (reused after a delete), so a posting is two 32-bit integers.
/// A row whose field is null has no slot and counts in no statistic, as in the scan.
struct TextIndex: Sendable {
  /// The indexed field's position in the row.
  let position: Int
  /// Each indexed row's slot, by id.
  private(set) var slots: [Value: Int32] = [:]
  /// Each slot's row id (``Value/null`` when the slot is free).
  private(set) var ids: [Value] = []
  /// Each slot's length in words (-1 when the slot is free).
  private(set) var lengths: [Int32] = []
  /// Slots free for reuse.
  private var free: [Int32] = []
  /// Each word's rows: slot to how many times the word occurs in the row.
  private(set) var postings: [TextToken: [Int32: Int32]] = [:]
  /// Rows with a text and their words together.
  private(set) var statistics = TextRanking.FieldStatistics()

  init(position: Int) { self.position = position }

  /// Brings the index from the row with an id being `old` to its being `new` (either may be
  /// absent: an insert or a delete).
  mutating func update(id: Value, old: Row?, new: Row?) {
    let before = old.flatMap { Self.text($0[position]) }
    let after = new.flatMap { Self.text($0[position]) }
    if let before, let after, before.utf8.elementsEqual(after.utf8) { return }
    if let before, let slot = slots[id] {
      for (word, _) in Self.countedWords(before) { removePosting(word, slot: slot) }
      statistics.words -= Int(lengths[Int(slot)])
      if after == nil {
        slots[id] = nil
        ids[Int(slot)] = .null
        lengths[Int(slot)] = -1
        free.append(slot)
        statistics.rows -= 1
        return
      }
    }
    guard let after else { return }
    let slot: Int32
    if let taken = slots[id] {
      slot = taken
    } else {
      slot = takeSlot(for: id)
      statistics.rows += 1
    }
    var length: Int32 = 0
    for (word, count) in Self.countedWords(after) {
      postings[word, default: [:]][slot] = count
      length += count
    }
    lengths[Int(slot)] = length
    statistics.words += Int(length)
  }

  private mutating func takeSlot(for id: Value) -> Int32 {
    let slot: Int32
    if let reused = free.popLast() {
      slot = reused
      ids[Int(slot)] = id
    } else {
      slot = Int32(ids.count)
      ids.append(id)
      lengths.append(0)
    }
    slots[id] = slot
    return slot
  }

  private mutating func removePosting(_ word: TextToken, slot: Int32) {
    guard let place = postings.index(forKey: word) else { return }
    postings.values[place][slot] = nil
    if postings.values[place].isEmpty { postings.remove(at: place) }
  }

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
