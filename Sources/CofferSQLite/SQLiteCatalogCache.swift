@_spi(Backend) import Coffer
import Foundation

/// The catalog records a store's connections decoded or wrote, by their stored JSON texts.
///
/// Decoding a schema's JSON costs far more than reading its row, and a migration step, a
/// `prepare` and the reads after them read the same records again and again, each on any of
/// the store's connections. A record is found by its texts as read, so a record another
/// process changed is decoded afresh, never taken from here.
final class SQLiteCatalogCache: Sendable {
  /// The JSON texts of one stored record: its columns and its schema.
  struct Text: Hashable, Sendable {
    var columns: Data
    var schema: Data
  }

  /// The most records kept; past it the cache starts again.
  static let limit = 256

  private let records = LockedState<[Text: (columns: [String], schema: EntitySchema)]>([:])

  /// The record decoded from these texts, if one was.
  subscript(text: Text) -> (columns: [String], schema: EntitySchema)? {
    records.withLock { $0[text] }
  }

  /// Keeps a record for the next read of the same texts.
  func remember(_ columns: [String], _ schema: EntitySchema, as text: Text) {
    records.withLock { records in
      if records.count >= Self.limit { records.removeAll(keepingCapacity: true) }
      records[text] = (columns, schema)
    }
  }
}
