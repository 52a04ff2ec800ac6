@_spi(Backend) import Coffer
import Foundation

extension StoreLayout {
  /// The feed (kept in the store file's header with the rows, so that every write of the file
  /// holds the rows and the feed of the same batches) as the header's `changes` entry:
  /// `{ trimmedThrough, last, batches: [{ sequence, committedAt, payload }] }`.
  static func plist(_ feed: RecordedChangeLog) -> PlistValue {
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
  static func feed(in header: PlistValue?) throws -> RecordedChangeLog? {
    guard let entry = header?["changes"] else { return nil }
    guard case .integer(let trimmed)? = entry["trimmedThrough"], case .integer(let last)? = entry["last"],
      case .array(let items)? = entry["batches"], trimmed >= 0, last >= trimmed
    else {
      throw LayoutError.layout("'changes' lacks its trimmedThrough, last or batches")
    }
    var feed = RecordedChangeLog(recording: true, trimmedThrough: UInt64(trimmed), last: UInt64(last))
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
