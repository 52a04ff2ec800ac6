@_spi(Backend) import Coffer

/// Entry points for the libFuzzer targets in `Fuzz/`: reading one line of a JSON Lines export
/// the way ``StoreImporter`` does, without a store.
///
/// Not API: the `Fuzzing` SPI exists only so that the fuzz targets can reach the decoders.
@_spi(Fuzzing) public enum ImportFuzzing {
  /// One line of an export, as the importer reads it.
  public enum Line: Sendable, Equatable {
    /// A blank line, which the importer skips.
    case blank
    /// The opening line, with its format version.
    case opening(version: Int)
    /// An entity's header line: its schema and row count.
    case header(EntitySchema, rows: Int)
    /// A row line, read in the layout of the schema given.
    case row(Row)
    /// The closing line: each entity's name, row count and digest.
    case end([EntityTotal])
  }

  /// An entity's totals on the closing line.
  public struct EntityTotal: Sendable, Equatable {
    /// The entity's name.
    public var name: String
    /// How many rows the export holds of it.
    public var rows: Int
    /// The digest of its rows.
    public var hash: String
  }

  /// Reads one line (without its line break) the way the importer does; a row line is read in
  /// the layout of `schema`. The line's kind decides how it is read, whatever lines would have
  /// to come before it in an export.
  ///
  /// - Throws: ``CofferError`` — and only that — for a line that is not of the export format.
  public static func parseLine(_ line: String, rowsOf schema: EntitySchema) throws -> Line {
    if line.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return .blank }
    var parser = JSONLineParser(line)
    switch try parser.lineKind() {
    case "coffer":
      let opening = try StoreImporter.decode(StoreImporter.Opening.self, line, number: 1)
      guard opening.coffer == "export" else {
        throw CofferError(.invalidInput, "The input is not a Coffer export.")
      }
      return .opening(version: opening.version)
    case "row":
      return .row(try parser.row(of: schema))
    case "entity":
      let header = try StoreImporter.decode(StoreImporter.Header.self, line, number: 1)
      return .header(header.entity, rows: header.rows)
    case "end":
      let closing = try StoreImporter.decode(StoreImporter.Closing.self, line, number: 1)
      return .end(closing.end.entities.map { EntityTotal(name: $0.name, rows: $0.rows, hash: $0.hash) })
    case let kind:
      throw CofferError(.invalidInput, "A line of an unknown kind (`\(kind)`).")
    }
  }

  /// The header line an export writes for an entity (without its line break).
  public static func headerLine(_ schema: EntitySchema, rows: Int) throws -> String {
    String(try JSONLines.header(schema, rows: rows).dropLast())
  }

  /// The line an export writes for a row of `schema` (without its line break).
  public static func rowLine(_ row: Row, of schema: EntitySchema) -> String {
    var text = ""
    JSONLines.appendRow(row, of: schema, to: &text)
    return String(text.dropLast())
  }
}
