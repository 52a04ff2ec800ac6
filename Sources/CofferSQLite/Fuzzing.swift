@_spi(Backend) import Coffer
import Foundation

/// Entry points for the libFuzzer targets in `Fuzz/`: the decoding `SQLiteBackend` does of its
/// `coffer_schema` table's columns and of its migration log, reached in memory, without a
/// database.
///
/// Not API: the `Fuzzing` SPI exists only so that the fuzz targets can reach the decoders.
@_spi(Fuzzing) public enum SQLiteFuzzing {
  /// A `coffer_schema` row as decoded: an entity's stored schema, table and columns.
  public struct CatalogEntry: Sendable, Equatable {
    /// The stored schema.
    public var schema: EntitySchema
    /// The table holding the rows.
    public var tableName: String
    /// The column of each field, in field order.
    public var columns: [String]

    /// An entry.
    public init(schema: EntitySchema, tableName: String, columns: [String]) {
      self.schema = schema
      self.tableName = tableName
      self.columns = columns
    }
  }

  /// Decodes an entity's `coffer_schema` row from its `columns` and `schema` texts (as stored:
  /// the bytes SQLite hands back), the way reading the catalog does.
  ///
  /// - Throws: ``CofferError`` — and only that — for texts that are not a record.
  public static func decodeCatalogEntry(
    _ entity: String, tableName: String, columns: [UInt8], schema: [UInt8]
  ) throws -> CatalogEntry {
    let record = try SQLiteCatalog.decode(
      entity, tableName: tableName, columns: Data(columns), schema: Data(schema), store: "sqlite:fuzz",
      path: "fuzz")
    return CatalogEntry(schema: record.schema, tableName: record.tableName, columns: record.columns)
  }

  /// The `columns` and `schema` texts the catalog stores an entry as.
  public static func encodeCatalogEntry(_ entry: CatalogEntry) throws -> (columns: [UInt8], schema: [UInt8]) {
    let texts = try SQLiteCatalog.encode(
      SQLiteCatalog.Record(schema: entry.schema, tableName: entry.tableName, columns: entry.columns))
    return (Array(texts.columns.utf8), Array(texts.schema.utf8))
  }

  /// Decodes one row of the migration log the way listing the migrations does.
  ///
  /// - Throws: ``CofferError`` — and only that — for bytes that are not a record.
  public static func decodeMigration(_ bytes: [UInt8]) throws -> MigrationRecord {
    try MigrationRecord(encoded: Data(bytes), store: "sqlite:fuzz")
  }
}
