/// A request for the rows of one entity: which (``filter``), in what order (``sort``), and
/// which slice (``offset``, ``limit``). The untyped form a ``StorageBackend`` receives.
///
/// The order is always total: after the ``sort`` keys, rows are ordered by id ascending.
@_spi(Backend) public struct Query: Sendable, Hashable {
  /// The entity's name.
  public var entity: String
  /// Which rows.
  public var filter: Filter
  /// The order; ties, and an empty list, are ordered by id ascending.
  public var sort: [Sort]
  /// At most this many rows, or all when `nil`.
  public var limit: Int?
  /// Skip this many rows of the ordered result first.
  public var offset: Int
  /// The schema the reader decodes rows with, or `nil` for the entity's current one.
  ///
  /// the store's query check sets it. A backend hands over rows in this layout
  /// even when another task prepared the entity with a different schema since (see
  /// ``RowReshaper/init(reading:as:store:)``), so a reader never decodes a row by the wrong
  /// field positions.
  public var layout: EntitySchema?

  /// A query.
  public init(entity: String, filter: Filter = .all, sort: [Sort] = [], limit: Int? = nil, offset: Int = 0) {
    self.entity = entity
    self.filter = filter
    self.sort = sort
    self.limit = limit
    self.offset = offset
  }
}
