/// The rows of a bulk insert, made one at a time as a backend writes them: the payload of
/// ``ChangeSet/Operation/insertMany(entity:rows:)``.
///
/// A large insert never holds every row in memory at once: a backend asks for row 0, writes
/// it, asks for row 1, and so on, inside its write transaction. An error thrown while making
/// a row aborts the whole batch and is rethrown as it is.
///
/// A backend may ask for the same position more than once (it retried its transaction, or
/// applies a batch to two copies of its tables), so making a row must have no side effect.
/// Two sources are equal only when they are the same source.
@_spi(Backend) public final class RowSource: Sendable, Hashable {
  /// How many rows there are.
  public let count: Int
  private let make: @Sendable (Int) throws -> Row

  /// A source of `count` rows, the row at a position made by `make` (positions `0..<count`).
  public init(count: Int, _ make: @Sendable @escaping (Int) throws -> Row) {
    self.count = max(0, count)
    self.make = make
  }

  /// A source of the given rows.
  public convenience init(_ rows: [Row]) {
    self.init(count: rows.count) { rows[$0] }
  }

  /// The row at a position (less than ``count``).
  public func row(at position: Int) throws -> Row { try make(position) }

  /// A source whose rows are this one's passed through `transform` (checked, reshaped) as
  /// they are made.
  public func map(_ transform: @Sendable @escaping (Row) throws -> Row) -> RowSource {
    RowSource(count: count) { [make] position in try transform(try make(position)) }
  }

  /// A source that makes each row once and hands out the same row when asked again: for a
  /// backend that applies a batch to two copies of its state.
  public func remembering() -> RowSource {
    // Rows are usually asked for in order: keep them in that order.
    let made = LockedState<[Row]>([])
    return RowSource(count: count) { [make] position in
      if let row = made.withLock({ position < $0.count ? $0[position] : nil }) { return row }
      let row = try make(position)
      made.withLock { if position == $0.count { $0.append(row) } }
      return row
    }
  }

  /// Whether two sources are the same source.
  public static func == (lhs: RowSource, rhs: RowSource) -> Bool { lhs === rhs }
  /// Hashes the source's identity.
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
