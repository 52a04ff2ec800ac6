@_spi(Backend) import Coffer
import Foundation

extension Store {
  /// Writes the store's data as JSON Lines (the format is described in `Docs/Tools.md`): an
  /// opening line, then per entity a header with its exact schema and row count followed by
  /// its rows in id order, then a closing line with every entity's digest.
  ///
  /// Reads one snapshot when the backend has ``SnapshotReading``, a page of rows
  /// at a time, and hands `write` whole lines — about a page of rows per call — so memory stays
  /// flat however large the store. Every kind round-trips exactly through
  /// ``StoreImporter``.
  ///
  /// - Parameters:
  ///   - entities: The entities to export, or `nil` for all of them.
  ///   - progress: Called as each entity starts and ends and every thousand rows or so between,
  ///     with the rows written so far out of every entity's count.
  ///   - write: Receives the text, in order; an error it throws stops the export.
  /// - Returns: The digest of what was exported.
  /// - Throws: ``CofferError/Code/unknownEntity`` for a named entity the store does not hold,
  ///   the backend's error, or what `write` threw.
  @discardableResult
  public func exportJSONLines(
    entities: [String]? = nil, progress: (@Sendable (RowProgress) -> Void)? = nil,
    write: (String) async throws -> Void
  ) async throws -> StoreDigest {
    let schemas = try await storedSchemas(named: entities)
    return try await withRowReader { reader in
      try await write(JSONLines.opening)
      // Every count first, in the same snapshot as the rows, so progress knows the total.
      var counts: [Int] = []
      for schema in schemas { counts.append(try await reader.count(of: schema)) }
      var counter = RowProgressCounter(totalRows: counts.reduce(0, +), report: progress)
      var digests: [EntityDigest] = []
      for (schema, count) in zip(schemas, counts) {
        try await write(try JSONLines.header(schema, rows: count))
        counter.start(schema.name, rows: count)
        var digester = RowDigester(schema: schema)
        try await reader.pages(of: schema, pageSize: 1_000) { rows in
          var text = ""
          for row in rows {
            digester.add(row)
            JSONLines.appendRow(row, of: schema, to: &text)
          }
          try await write(text)
          counter.add(rows.count)
        }
        counter.endEntity()
        digests.append(digester.digest)
      }
      let digest = StoreDigest(entities: digests)
      try await write(JSONLines.closing(digest))
      return digest
    }
  }
}
