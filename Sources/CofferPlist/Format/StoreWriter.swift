@_spi(Backend) import Coffer

/// Assembles a whole store file from schemas and encoded rows, in either format.
///
/// Rows come already encoded (``EncodedRow``), so writing a file is mostly copying bytes.
enum StoreWriter {
  struct Entity {
    var schema: EntitySchema
    var rows: Dictionary<Value, EncodedRow>.Values
  }

  static func file(_ entities: [Entity], migrations: [MigrationRecord], format: PlistBackend.Format)
    -> [UInt8]
  {
    switch format {
    case .xml: xml(entities, header: StoreLayout.header(migrations: migrations))
    case .binary: binary(entities, header: StoreLayout.header(migrations: migrations))
    }
  }

  private static func schemas(_ entities: [Entity]) -> PlistValue {
    .dict(entities.map { ($0.schema.name, StoreLayout.plist($0.schema)) })
  }

  private static func xml(_ entities: [Entity], header: PlistValue) -> [UInt8] {
    var writer = XMLPlistWriter()
    let rowBytes = entities.reduce(0) { total, entity in total + entity.rows.reduce(0) { $0 + $1.bytes.count }
    }
    writer.bytes.reserveCapacity(rowBytes + 4096)
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
        for row in entity.rows { writer.bytes.append(contentsOf: row.bytes) }
        writer.indent(2)
        writer.append("</array>\n")
      }
      writer.indent(1)
      writer.append("</dict>\n")
    }
    writer.append("</dict>\n")
    writer.bytes.append(contentsOf: XMLPlistWriter.footer)
    return writer.bytes
  }

  private static func binary(_ entities: [Entity], header headerValue: PlistValue) -> [UInt8] {
    var writer = BinaryPlistWriter()
    let header = writer.append(headerValue)
    let schemaObject = writer.append(schemas(entities))
    var entityKeys: [Int] = []
    var entityArrays: [Int] = []
    for entity in entities {
      entityKeys.append(writer.appendObject(BinaryPlistObjects.string(entity.schema.name)))
      let fieldKeys = entity.schema.fields.map { writer.appendObject(BinaryPlistObjects.string($0.name)) }
      let rowObjects = writer.appendRows(entity.rows, fieldKeys: fieldKeys)
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
    return writer.finish(top: root)
  }
}
