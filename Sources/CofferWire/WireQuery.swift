@_spi(Backend) import Coffer

/// One sort key on the wire: `{"field":"date","ascending":false}`.
package struct WireSort: Codable, Sendable, Hashable {
  /// The field.
  package var field: String
  /// Whether smaller values come first (default true).
  package var ascending: Bool

  /// A sort key from the core's.
  package init(_ sort: Sort) {
    field = sort.field
    ascending = sort.ascending
  }

  private enum CodingKeys: String, CodingKey { case field, ascending }

  /// Decodes a sort key; `ascending` may be left out.
  package init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    field = try container.decode(String.self, forKey: .field)
    ascending = try container.decodeIfPresent(Bool.self, forKey: .ascending) ?? true
  }

  /// The core's sort key.
  package var sort: Sort { Sort(field, ascending: ascending) }
}

/// Where a keyset page starts, for API users: the values of the sort fields, then the id, of the
/// last row seen.
package struct WireCursor: Codable, Sendable, Hashable {
  /// Sort-field values, then the id.
  package var values: [Value]

  /// A cursor.
  package init(values: [Value]) { self.values = values }
}

/// A ``Query`` on the wire, with the two extras an API user may want: a keyset ``after`` and a
/// projection ``select``. A Coffer client sends neither.
package struct WireQuery: Codable, Sendable, Hashable {
  /// The entity.
  package var entity: String
  /// Which rows (every row when `nil`).
  package var filter: WireFilter?
  /// The order; ties by id ascending.
  package var sort: [WireSort]?
  /// At most this many rows.
  package var limit: Int?
  /// Rows to skip first.
  package var offset: Int?
  /// The schema the rows come back in (the entity's when `nil`).
  package var layout: EntitySchema?
  /// The layout named by its digest (``WireLayoutDigest``) in place of ``layout``: the server
  /// takes it when the digest is its own stored schema's, and refuses it with
  /// ``Coffer/CofferError/Code/schemaMismatch`` otherwise (the client then sends the layout). A
  /// ``layout`` given beside it wins.
  package var layoutDigest: String?
  /// Keyset: start after this row.
  package var after: WireCursor?
  /// Projection: only these fields, in this order.
  package var select: [String]?

  /// A wire query for a core query (its layout included).
  package init(_ query: Query) {
    entity = query.entity
    filter = query.filter == .all ? nil : WireFilter(query.filter)
    sort = query.sort.isEmpty ? nil : query.sort.map(WireSort.init)
    limit = query.limit
    offset = query.offset == 0 ? nil : query.offset
    layout = query.layout
  }

  /// The core query (without ``after`` and ``select``, which the server adds).
  package var query: Query {
    var query = Query(
      entity: entity, filter: filter?.filter ?? .all, sort: (sort ?? []).map(\.sort), limit: limit,
      offset: offset ?? 0)
    query.layout = layout
    return query
  }
}

/// Rows on the wire: each an array of ``Value``s in the layout's field order.
package struct WireRows: Codable, Sendable, Hashable {
  /// The rows.
  package var rows: [[Value]]
  /// Keyset: the cursor of the last row, when a `limit` was given and the page is full.
  package var next: WireCursor?

  /// Rows.
  package init(rows: [[Value]], next: WireCursor? = nil) {
    self.rows = rows
    self.next = next
  }
}

/// A number of rows.
package struct WireCount: Codable, Sendable, Hashable {
  /// The count.
  package var count: Int

  /// A count.
  package init(count: Int) { self.count = count }
}

/// Rows by id: `{"entity":"E","ids":[…],"layout":…}`.
package struct WireGet: Codable, Sendable, Hashable {
  /// The entity.
  package var entity: String
  /// The ids, in the order the rows come back.
  package var ids: [Value]
  /// The schema the rows come back in.
  package var layout: EntitySchema?

  /// A get.
  package init(entity: String, ids: [Value], layout: EntitySchema? = nil) {
    self.entity = entity
    self.ids = ids
    self.layout = layout
  }
}
