/// A request for one aggregate over the rows a filter selects, optionally per group: the
/// untyped form a ``StorageBackend`` receives in ``AggregateComputing/aggregate(_:)`` and the row
/// API's spelling (``Store/aggregateRows(_:)``), with stored field names.
///
/// ```swift
/// let unread = try await store.aggregateRows(
///   Aggregation(entity: "Message", filter: FieldRef("isRead") == false, .count, groupedBy: "threadID"))
/// ```
///
/// On a ``KeyPathStorable`` type, aggregate with key paths on ``StoreQuery`` instead:
/// `store.query(Message.self).filter(\.isRead == false).group(by: \.threadID).count()`.
///
/// The semantics are the same on every backend (the conformance suite's `aggregate.*` checks):
/// nulls are ignored by every function but ``Function/count``; ``Function/sum(_:)``,
/// ``Function/min(_:)``, ``Function/max(_:)`` and ``Function/average(_:)`` of no values are
/// null; groups come in ascending order of their key by ``ValueOrder`` (the null key first, all
/// nulls one group), one group per key some selected row holds.
///
/// Doubles: backends add in whatever order they read rows (SQLite also compensates rounding),
/// so a sum or average of doubles agrees with the exact one to within
/// ``relativeTolerance`` times the sum of the values' magnitudes; sums of integers are exact,
/// and averages of integers are within the same tolerance. An average is the sum divided by
/// the count. With `+infinity` among the values (and no `-infinity`) a sum or average is
/// `+infinity`, and the other way round; with both it would be NaN, which Coffer never stores
/// or returns, so it throws ``CofferError/Code/valueOutOfRange`` — as it does when finite values
/// add up beyond `Double`'s range. A zero result or key is `+0.0`.
public struct Aggregation: Sendable, Hashable {
  /// What to compute over the selected rows.
  public enum Function: Sendable, Hashable {
    /// How many rows: `.int`, 0 for none.
    case count
    /// How many distinct non-null values a field holds: `.int`, 0 for none. Strings are
    /// distinct by their bytes, doubles numerically (`-0.0` and `0.0` are one value).
    case countDistinct(String)
    /// The sum of an `int` or `double` field's non-null values, of the field's kind; null for
    /// none. Integers are added exactly: a sum outside `Int64` throws
    /// ``CofferError/Code/valueOutOfRange``, whatever the order of the rows. Doubles: see
    /// ``Aggregation`` for infinities and the tolerance.
    case sum(String)
    /// The smallest non-null value of a field by ``ValueOrder`` (strings by code point, dates
    /// chronologically, UUIDs and bytes by their bytes, `false` before `true`); null for none.
    case min(String)
    /// The largest non-null value of a field by ``ValueOrder``; null for none.
    case max(String)
    /// The mean of an `int` or `double` field's non-null values as a `.double`; null for none.
    case average(String)

    /// The field it reads, or `nil` for ``count``.
    public var field: String? {
      switch self {
      case .count: nil
      case .countDistinct(let field), .sum(let field), .min(let field), .max(let field), .average(let field):
        field
      }
    }

    /// The function's name in messages: `sum`, `count(distinct:)`…
    public var name: String {
      switch self {
      case .count: "count"
      case .countDistinct: "count(distinct:)"
      case .sum: "sum"
      case .min: "min"
      case .max: "max"
      case .average: "average"
      }
    }
  }

  /// How far a sum or average of doubles may be from the exact one, relative to the sum of
  /// the magnitudes of the values added: `1e-9`. The conformance suite compares with it.
  public static let relativeTolerance = 1e-9

  /// The entity, the filter selecting the rows, and the layout (set by
  /// the store's aggregation check). Sort, offset and limit are not
  /// part of an aggregate: every row the filter selects counts.
  @_spi(Backend) public var query: Query
  /// What to compute.
  public var function: Function
  /// The field whose values form the groups, or `nil` for one result over every selected row.
  public var groupBy: String?

  /// An aggregate over the rows of `entity` that `filter` selects, per value of `groupBy`
  /// when it is given.
  public init(entity: String, filter: Filter = .all, _ function: Function, groupedBy groupBy: String? = nil) {
    self.query = Query(entity: entity, filter: filter)
    self.function = function
    self.groupBy = groupBy
  }
}

/// One result of an aggregate: the group's key and the aggregate's value over its rows.
///
/// An aggregate without grouping gives exactly one, whose key is ``Value/null`` in the row API
/// (``Store/aggregateRows(_:)``); grouped ones give one per key, in ascending key order, nulls
/// first. The typed API (``GroupedStoreQuery``) gives keys and values of the properties' types.
public struct AggregateGroup<Key: Sendable, Result: Sendable>: Sendable {
  /// The value of the grouping field the group's rows share (nil or ``Value/null`` for the
  /// group of rows where it is null).
  public var key: Key
  /// The aggregate over the group's rows.
  public var value: Result

  /// A group with its key and value.
  @_spi(Backend) public init(key: Key, value: Result) {
    self.key = key
    self.value = value
  }
}

extension AggregateGroup: Equatable where Key: Equatable, Result: Equatable {}
extension AggregateGroup: Hashable where Key: Hashable, Result: Hashable {}
