/// An optional ability of a ``StorageBackend``: reading only the first rows of each value of a
/// field, in the store itself.
///
/// Eager loading with a per-parent limit (`including(_:sort:limit:)`, ``IncludingQuery``)
/// asks a backend that adopts this protocol for the first `limit` children of a whole chunk of
/// parents in one call, so it reads no more rows than it returns: 200 threads with their newest
/// 5 messages read 1,000 rows, not every message of every thread. SQL backends answer it with a
/// window function (`row_number() OVER (PARTITION BY …)`). A backend that does not adopt it is
/// asked once per parent with a limited query instead, which reads as few rows in more calls.
@_spi(Backend) public protocol LimitPerValueReading: StorageBackend {
  /// Reads the rows `query` selects — its filter, in its sort order with ties by id ascending;
  /// it has no offset and no limit — keeping of the rows that share a value of `field` only the
  /// first `limit`, and hands each over as ``StorageBackend/read(_:_:)`` does, in the query's order.
  ///
  /// - Parameters:
  ///   - query: a validated query, as ``StorageBackend/read(_:_:)`` receives it.
  ///   - limit: how many rows to keep per value of `field`; at least 0.
  ///   - field: the stored field whose values divide the rows (a child's reference to its
  ///     parent); rows where it is null form one more division.
  ///   - visit: receives each row kept; an error it throws stops the read and is rethrown.
  func read(
    _ query: Query, first limit: Int, per field: String, _ visit: (any StoredFields) throws -> Void
  ) async throws
}
