@_spi(Backend) import Coffer

/// How a query reads an entity: which database it walks, between which keys, in which
/// direction, and whether rows come out in the query's order (so a limit can stop the walk).
///
/// The walk yields a superset of the matching rows — bounds are inclusive and conservative —
/// and every row is tested with the core's ``CompiledFilter``, so results are exactly the
/// reference semantics whatever the plan.
struct QueryPlan {
  enum Access {
    /// Point lookups in the rows database, in this order.
    case ids([[UInt8]])
    /// A walk of the rows database.
    case rows(KeyRange)
    /// A walk of an index, with the rows looked up by id.
    case index(IndexHandle, KeyRange)
  }

  /// Keys from `lower` (inclusive) to `upper` (exclusive), walked backwards when `descending`.
  struct KeyRange {
    var lower: [UInt8]?
    var upper: [UInt8]?
    var descending = false
  }

  private(set) var access: Access
  /// Whether the walk yields rows in the query's order.
  private(set) var isOrdered: Bool
  let filter: CompiledFilter
  /// Whether the filter is `.all` (a count needs no rows).
  let matchesAll: Bool
  /// Whether every row the walk yields matches the filter, which then need not be evaluated:
  /// the filter is `.all`, or only equalities that the walk's key prefix pins.
  private(set) var walkMatchesFilter: Bool
  /// The positions of the fields the filter reads: a row is tested on these alone, read in
  /// place, before it is decoded whole.
  let filterPositions: [Int]
  /// Whether the walk is of an index with every field pinned by an equality, so it visits the
  /// duplicates of one key (its range's lower bound): counting them is one `mdb_cursor_count`.
  private(set) var visitsOneKey = false
  /// Whether a walk of every row would yield rows in the query's order (by id).
  private let fullWalkIsOrdered: Bool
  /// Whether a walk of every row goes backwards (the query sorts by id, descending).
  private let fullWalkIsDescending: Bool

  init(_ query: Query, handle: EntityHandle) throws {
    let schema = handle.schema
    filter = try CompiledFilter(query.filter, schema: schema)
    filterPositions = query.filter.fields.compactMap { schema.position(of: $0) }
    matchesAll = query.filter == .all
    let constraints = Constraints(query.filter, schema: schema)
    let sort = Self.effectiveSort(query.sort, schema: schema, pinned: constraints.equal)
    let idPosition = schema.idPosition
    let idAscending = sort.isEmpty
    let idDescending = sort.count == 1 && sort[0].position == idPosition && !sort[0].ascending
    (fullWalkIsOrdered, fullWalkIsDescending) = (idAscending || idDescending, idDescending)

    let pinsOnly = constraints.onlyEqualities
    if let id = constraints.equal[idPosition], !id.isNull {
      (access, isOrdered) = (.ids([KeyEncoding.idKey(id)]), true)
      walkMatchesFilter = matchesAll || (pinsOnly && constraints.equal.count == 1)
      return
    }
    if let ids = constraints.idIn {
      var keys = Array(Set(ids.filter { !$0.isNull }.map(KeyEncoding.idKey))).sorted {
        $0.lexicographicallyPrecedes($1)
      }
      if idDescending { keys.reverse() }
      (access, isOrdered) = (.ids(keys), idAscending || idDescending)
      walkMatchesFilter = matchesAll
      return
    }

    var best: (access: Access, ordered: Bool, score: Int, exact: Bool, oneKey: Bool)?
    if let range = constraints.range(on: idPosition, component: false) {
      var range = range
      range.descending = idDescending
      let ordered = idAscending || idDescending
      best = (.rows(range), ordered, 6 + (ordered ? 3 : 0), false, false)
    }
    var orderedFullWalk: (access: Access, ordered: Bool, score: Int, exact: Bool, oneKey: Bool)?
    for index in handle.indexes {
      let fields = index.positions
      var prefix: [UInt8] = []
      var bound = 0
      while bound < fields.count, let value = constraints.equal[fields[bound]] {
        KeyEncoding.appendComponent(value, to: &prefix)
        bound += 1
      }
      var range = QueryPlan.KeyRange(
        lower: prefix.isEmpty ? nil : prefix, upper: KeyEncoding.successor(of: prefix))
      if prefix.isEmpty { range.upper = nil }
      var narrowed = false
      if bound < fields.count,
        let inner = constraints.range(on: fields[bound], component: true, after: prefix)
      {
        range = inner
        narrowed = true
      }
      let rest = Array(fields[bound...])
      let ordered: Bool
      if sort.isEmpty {
        ordered = rest.isEmpty
      } else {
        ordered =
          sort.map(\.position) == rest && sort.allSatisfy { $0.ascending == sort[0].ascending }
      }
      range.descending = ordered && !sort.isEmpty && !sort[0].ascending
      let score = bound * 10 + (narrowed ? 5 : 0) + (ordered ? 3 : 0)
      if bound == 0 && !narrowed {
        if ordered && !sort.isEmpty && query.limit != nil && orderedFullWalk == nil {
          orderedFullWalk = (.index(index, range), true, 0, false, false)
        }
        continue
      }
      let exact = pinsOnly && !narrowed && bound == constraints.equal.count
      if score > (best?.score ?? 0) {
        best = (.index(index, range), ordered, score, exact, !narrowed && bound == fields.count)
      }
    }
    if let best = best ?? orderedFullWalk {
      (access, isOrdered, visitsOneKey) = (best.access, best.ordered, best.oneKey)
      walkMatchesFilter = matchesAll || best.exact
    } else {
      (access, isOrdered) = (.rows(KeyRange(descending: idDescending)), idAscending || idDescending)
      walkMatchesFilter = matchesAll
    }
  }

  /// Whether the walk is of an index and must visit every entry of its range: its rows are
  /// sorted afterwards, or the query has no limit to stop at. Such a walk looks every row up by
  /// id, and may cost more than ``walkingEveryRow()``.
  func walksWholeIndexRange(limit: Int?) -> (IndexHandle, KeyRange)? {
    guard case .index(let index, let range) = access, !(isOrdered && limit != nil) else { return nil }
    return (index, range)
  }

  /// This plan with a walk of every row instead, each tested in place.
  func walkingEveryRow() -> QueryPlan {
    var plan = self
    plan.access = .rows(KeyRange(descending: fullWalkIsDescending))
    plan.isOrdered = fullWalkIsOrdered
    plan.walkMatchesFilter = matchesAll
    plan.visitsOneKey = false
    return plan
  }

  /// The sort keys that decide the order: those before the first key on the id (which makes the
  /// order total), without keys on fields the filter pins to one value, without a final id
  /// ascending (the default tie-break).
  private static func effectiveSort(_ sort: [Sort], schema: EntitySchema, pinned: [Int: Value]) -> [(
    position: Int, ascending: Bool
  )] {
    var keys: [(position: Int, ascending: Bool)] = []
    for key in sort {
      guard let position = schema.position(of: key.field) else { continue }
      if position == schema.idPosition {
        if !key.ascending { keys.append((position, false)) }
        break
      }
      if pinned[position] == nil { keys.append((position, key.ascending)) }
    }
    return keys
  }
}

/// The conjuncts of a filter that can bound a walk: equalities, ranges and string prefixes on
/// single fields, and a list of ids.
struct Constraints {
  var equal: [Int: Value] = [:]
  var lower: [Int: Value] = [:]
  var upper: [Int: Value] = [:]
  var prefix: [Int: String] = [:]
  var idIn: [Value]?
  /// Whether the filter is nothing but equalities on distinct fields, all in ``equal``.
  var onlyEqualities = true

  init(_ filter: Filter, schema: EntitySchema) {
    var conjuncts: [Filter] = [filter]
    while let next = conjuncts.popLast() {
      if case .compare(_, .equal, _) = next {
      } else if case .and = next {
      } else {
        onlyEqualities = false
      }
      switch next {
      case .and(let parts): conjuncts.append(contentsOf: parts)
      case .compare(let field, let op, let value):
        guard let position = schema.position(of: field) else {
          onlyEqualities = false
          continue
        }
        switch op {
        case .equal:
          if equal[position] == nil { equal[position] = value } else { onlyEqualities = false }
        case .less, .lessOrEqual: if !value.isNull, upper[position] == nil { upper[position] = value }
        case .greater, .greaterOrEqual: if !value.isNull, lower[position] == nil { lower[position] = value }
        case .notEqual: break
        }
      case .string(let field, .hasPrefix, let pattern):
        if let position = schema.position(of: field), prefix[position] == nil { prefix[position] = pattern }
      case .isIn(let field, let values):
        if schema.position(of: field) == schema.idPosition, idIn == nil { idIn = values }
      default: break
      }
    }
  }

  /// The key range a range or prefix condition on a field gives, after the bytes `prefix` of
  /// the fields before it; index components carry a null tag (`component`), id keys do not.
  func range(on position: Int, component: Bool, after prefix: [UInt8] = []) -> QueryPlan.KeyRange? {
    let tag: [UInt8] = component ? [1] : []
    if let pattern = self.prefix[position] {
      var start = prefix + tag
      KeyEncoding.appendPrefix(pattern, to: &start)
      // An empty prefix on the id bounds nothing: LMDB refuses an empty key to seek to.
      return QueryPlan.KeyRange(lower: start.isEmpty ? nil : start, upper: KeyEncoding.successor(of: start))
    }
    guard lower[position] != nil || upper[position] != nil else { return nil }
    var range = QueryPlan.KeyRange()
    var start = prefix + tag
    if let value = lower[position] { KeyEncoding.append(value, to: &start) }
    range.lower = start.isEmpty ? nil : start
    if let value = upper[position] {
      var end = prefix + tag
      KeyEncoding.append(value, to: &end)
      range.upper = KeyEncoding.successor(of: end)
    } else {
      range.upper = KeyEncoding.successor(of: prefix + tag)
      if prefix.isEmpty && !component { range.upper = nil }
    }
    return range
  }
}
