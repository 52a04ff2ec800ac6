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
  ///   - write: Receives the text, in order; an error it throws stops the export.
  /// - Returns: The digest of what was exported.
  /// - Throws: ``CofferError/Code/unknownEntity`` for a named entity the store does not hold,
  ///   the backend's error, or what `write` threw.
  @discardableResult
  public func exportJSONLines(entities: [String]? = nil, write: (String) async throws -> Void) async throws
    -> StoreDigest
  {
    let schemas = try await storedSchemas(named: entities)
    return try await withRowReader { reader in
      try await write(JSONLines.opening)
      var digests: [EntityDigest] = []
      for schema in schemas {
        try await write(try JSONLines.header(schema, rows: try await reader.count(of: schema)))
        var digester = RowDigester(schema: schema)
        try await reader.pages(of: schema, pageSize: 1_000) { rows in
          var text = ""
          for row in rows {
            digester.add(row)
            JSONLines.appendRow(row, of: schema, to: &text)
          }
          try await write(text)
        }
        digests.append(digester.digest)
      }
      let digest = StoreDigest(entities: digests)
      try await write(JSONLines.closing(digest))
      return digest
    }
  }
}
