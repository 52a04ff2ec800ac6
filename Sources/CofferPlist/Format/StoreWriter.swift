@_spi(Backend) import Coffer

/// Writes a whole store file from schemas and encoded rows, in either format, handing the bytes
/// over in pieces of about a megabyte, so the file is never whole in memory.
///
/// Rows come already encoded (``EncodedRow``), so writing a file is mostly copying bytes.
enum StoreWriter {
  struct Entity {
    var schema: EntitySchema
    var rows: Dictionary<Value, EncodedRow>.Values
  }

  /// Writes the file to `output`, a piece at a time, in order.
  static func write(
    _ entities: [Entity], migrations: [MigrationRecord], feed: RecordedChangeLog? = nil,
    format: PlistBackend.Format,
    to output: BinaryPlistWriter.Output
  ) throws {
    let header = StoreLayout.header(migrations: migrations, feed: feed)
    switch format {
    case .xml: try xml(entities, header: header, to: output)
    case .binary: try binary(entities, header: header, to: output)
    }
  }

  /// The whole file in one array.
  static func file(_ entities: [Entity], migrations: [MigrationRecord], format: PlistBackend.Format)
    -> [UInt8]
  {
    var bytes: [UInt8] = []
    // Gathering bytes in memory cannot fail.
    try? write(entities, migrations: migrations, format: format) { bytes.append(contentsOf: $0) }
    return bytes
  }

  private static func schemas(_ entities: [Entity]) -> PlistValue {
    .dict(entities.map { ($0.schema.name, StoreLayout.plist($0.schema)) })
  }

  private static func xml(_ entities: [Entity], header: PlistValue, to output: BinaryPlistWriter.Output)
    throws
  {
    var writer = XMLPlistWriter()
    func flushIfFull() throws {
      guard writer.bytes.count >= BinaryPlistWriter.pieceSize else { return }
      try writer.bytes.withUnsafeBytes(output)
      writer.bytes.removeAll(keepingCapacity: true)
    }
    writer.bytes.append(contentsOf: XMLPlistWriter.header)
    writer.append("<dict>\n")
    writer.indent(1)
    writer.writeKey(StoreLayout.marker)
    writer.write(header, depth: 1)
    writer.indent(1)
    writer.writeKey("schemas")
    writer.write(schemas(entities), depth: 1)
    writer.indent(1)
    writer.writeKey("entities")
    if entities.isEmpty {
      writer.indent(1)
      writer.append("<dict/>\n")
    } else {
      writer.indent(1)
      writer.append("<dict>\n")
      for entity in entities {
        writer.indent(2)
        writer.writeKey(entity.schema.name)
        writer.indent(2)
        if entity.rows.isEmpty {
          writer.append("<array/>\n")
          continue
        }
        writer.append("<array>\n")
        for row in entity.rows {
          writer.bytes.append(contentsOf: row.bytes)
          try flushIfFull()
        }
        writer.indent(2)
        writer.append("</array>\n")
      }
      writer.indent(1)
      writer.append("</dict>\n")
    }
    writer.append("</dict>\n")
    writer.bytes.append(contentsOf: XMLPlistWriter.footer)
    try writer.bytes.withUnsafeBytes(output)
  }

  private static func binary(
    _ entities: [Entity], header headerValue: PlistValue, to output: BinaryPlistWriter.Output
  )
    throws
  {
    var writer = BinaryPlistWriter()
    let header = writer.append(headerValue)
    let schemaObject = writer.append(schemas(entities))
    var entityKeys: [Int] = []
    var entityArrays: [Int] = []
    for entity in entities {
      entityKeys.append(writer.appendObject(BinaryPlistObjects.string(entity.schema.name)))
      let fieldKeys = entity.schema.fields.map { writer.appendObject(BinaryPlistObjects.string($0.name)) }
      let rowObjects = try writer.appendRows(entity.rows, fieldKeys: fieldKeys, to: output)
      entityArrays.append(
        writer.appendObject(
          BinaryPlistObjects.container(marker: 0xA0, count: rowObjects.count, references: rowObjects)))
    }
    let entitiesObject = writer.appendObject(
      BinaryPlistObjects.container(marker: 0xD0, count: entities.count, references: entityKeys + entityArrays)
    )
    let rootKeys = [StoreLayout.marker, "schemas", "entities"].map {
      writer.appendObject(BinaryPlistObjects.string($0))
    }
    let root = writer.appendObject(
      BinaryPlistObjects.container(
        marker: 0xD0, count: 3, references: rootKeys + [header, schemaObject, entitiesObject]))
    try writer.finish(top: root, to: output)
  }
}
