@_spi(Backend) import Coffer
import Foundation

/// The change feed of a property-list store, kept in the store file's header with the rows, so
/// that every write of the file holds the rows and the feed of the same batches: a crash leaves
/// the file before or after a write, never the one without the other (see Docs/Formats.md).
struct PlistFeed: Sendable, Equatable {
  /// Whether the store records a feed (it keeps doing so once on).
  var recording = false
  var trimmedThrough: UInt64 = 0
  var last: UInt64 = 0
  /// The batches kept, in order.
  var batches: [RecordedChanges] = []

  /// Appends a batch's payload as the next number, committed at `micros`.
  mutating func append(_ payload: [UInt8], at micros: Int64) -> UInt64 {
    last += 1
    batches.append(RecordedChanges(sequence: last, committedAt: micros, payload: payload))
    return last
  }

  /// Removes batches as `trim` says.
  mutating func trim(_ trim: ChangeTrim) {
    let cut: Int
    switch trim {
    case .through(let sequence):
      cut = batches.firstIndex { $0.sequence > sequence } ?? batches.count
      trimmedThrough = max(trimmedThrough, min(sequence, last))
    case .committedBefore(let micros):
      cut = batches.firstIndex { $0.committedAt >= micros } ?? batches.count
      if cut > 0 { trimmedThrough = max(trimmedThrough, batches[cut - 1].sequence) }
    }
    batches.removeFirst(cut)
  }

  /// The batches numbered above `sequence`, at most `limit`, found by binary search.
  func batches(after sequence: UInt64, limit: Int) -> ArraySlice<RecordedChanges> {
    var low = 0
    var high = batches.count
    while low < high {
      let middle = (low + high) / 2
      if batches[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
    }
    return batches[low..<min(batches.count, low + max(limit, 1))]
  }
}

extension StoreLayout {
  /// The feed as the header's `changes` entry:
  /// `{ trimmedThrough, last, batches: [{ sequence, committedAt, payload }] }`.
  static func plist(_ feed: PlistFeed) -> PlistValue {
    .dict([
      ("trimmedThrough", .integer(Int64(clamping: feed.trimmedThrough))),
      ("last", .integer(Int64(clamping: feed.last))),
      (
        "batches",
        .array(
          feed.batches.map { batch in
            .dict([
              ("sequence", .integer(Int64(clamping: batch.sequence))),
              ("committedAt", .integer(batch.committedAt)), ("payload", .data(Data(batch.payload))),
            ])
          })
      ),
    ])
  }

  /// The feed a `CofferStore` header records; `nil` when it has no `changes` (the store records
  /// none).
  static func feed(in header: PlistValue?) throws -> PlistFeed? {
    guard let entry = header?["changes"] else { return nil }
    guard case .integer(let trimmed)? = entry["trimmedThrough"], case .integer(let last)? = entry["last"],
      case .array(let items)? = entry["batches"], trimmed >= 0, last >= trimmed
    else {
      throw LayoutError.layout("'changes' lacks its trimmedThrough, last or batches")
    }
    var feed = PlistFeed(recording: true, trimmedThrough: UInt64(trimmed), last: UInt64(last))
    feed.batches.reserveCapacity(items.count)
    var previous = trimmed
    for item in items {
      guard case .integer(let sequence)? = item["sequence"], case .integer(let micros)? = item["committedAt"],
        case .data(let payload)? = item["payload"], sequence > previous, sequence <= last
      else {
        throw LayoutError.layout(
          "a batch in 'changes' lacks its sequence, committedAt or payload, or is out of order")
      }
      previous = sequence
      feed.batches.append(
        RecordedChanges(sequence: UInt64(sequence), committedAt: micros, payload: Array(payload)))
    }
    return feed
  }
}
