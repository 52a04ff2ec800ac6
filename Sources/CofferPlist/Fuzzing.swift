@_spi(Backend) import Coffer

/// Entry points for the libFuzzer targets in `Fuzz/`: the decoding `PlistBackend` does when it
/// opens a file, in memory, without a path, a lock or a file read.
///
/// Not API: the `Fuzzing` SPI exists only so that the fuzz targets can reach the decoders.
@_spi(Fuzzing) public enum PlistFuzzing {
  /// What a store file decodes to: its format, each entity's schema and rows, its migrations.
  public struct Image: Sendable {
    /// The file's format.
    public var format: PlistBackend.Format
    /// Every entity's schema, sorted by name.
    public var schemas: [EntitySchema]
    /// Every entity's rows, in id order (``ValueOrder``), by entity name.
    public var rows: [String: [Row]]
    /// The migration steps the header records.
    public var migrations: [MigrationRecord]

    /// An image.
    public init(
      format: PlistBackend.Format, schemas: [EntitySchema], rows: [String: [Row]],
      migrations: [MigrationRecord]
    ) {
      self.format = format
      self.schemas = schemas
      self.rows = rows
      self.migrations = migrations
    }
  }

  /// Decodes a binary (`bplist00`) store file image the way opening it does: parses it, checks
  /// the header, decodes every schema and row, and loads the rows into in-memory tables (which
  /// checks ids and unique constraints).
  ///
  /// - Throws: ``CofferError`` — and only that — for bytes that are not a binary store file.
  public static func decodeBinary(_ bytes: [UInt8]) throws -> Image {
    guard BinaryPlistReader.isBinary(bytes) else { throw notOfFormat("binary") }
    return try decode(bytes)
  }

  /// Decodes an XML store file image the way opening it does (see ``decodeBinary(_:)``).
  ///
  /// - Throws: ``CofferError`` — and only that — for bytes that are not an XML store file.
  public static func decodeXML(_ bytes: [UInt8]) throws -> Image {
    guard !bytes.isEmpty, StoreReader.looksLikeXML(bytes) else { throw notOfFormat("XML") }
    return try decode(bytes)
  }

  /// The file a store of `image`'s contents is written as, in `format`, by the writer
  /// `PlistBackend` uses (``RowFragments`` and ``StoreWriter``).
  public static func encode(_ image: Image, format: PlistBackend.Format) -> [UInt8] {
    let entities = image.schemas.map { schema in
      var rows: [Value: EncodedRow] = [:]
      for row in image.rows[schema.name] ?? [] {
        rows[row[schema.idPosition]] = RowFragments.encode(row, schema: schema, format: format)
      }
      return StoreWriter.Entity(schema: schema, rows: rows.values)
    }
    return StoreWriter.file(entities, migrations: image.migrations, format: format)
  }

  /// The shared path: ``StoreReader/load(_:file:)``, then the tables `PlistBackend.init` builds.
  private static func decode(_ bytes: [UInt8]) throws -> Image {
    let file = StoreFile(path: "fuzz.plist")
    let loaded = try StoreReader.load(bytes, file: file)
    var tables = InMemoryTables(storeName: file.storeName)
    try tables.prepare(loaded.schemas)
    for (entity, rows) in loaded.rows { try tables.load(rows, into: entity) }
    let schemas = tables.schemas.values.sorted { $0.name < $1.name }
    var rows: [String: [Row]] = [:]
    for schema in schemas {
      rows[schema.name] = tables.allRows(schema.name).sorted {
        ValueOrder.compare($0[schema.idPosition], $1[schema.idPosition]) < 0
      }
    }
    return Image(format: loaded.format, schemas: schemas, rows: rows, migrations: loaded.migrations)
  }

  private static func notOfFormat(_ format: String) -> CofferError {
    CofferError(.corruptStore, "The bytes are not a property list in the \(format) format.")
  }
}
