@_spi(Backend) import Coffer
import Foundation

/// Reads a store file: detects its format, parses it, and checks it is a Coffer store of a
/// version this build understands. Errors name the path and say what to do; the file is never
/// changed here.
///
/// Binary files are read by reference: the header and schemas become small value trees, while
/// rows are decoded straight into ``Row``s (``BinaryRowDecoder``). XML files are read in one
/// pass that decodes the rows straight into ``Row``s too (``XMLStoreDecoder``).
enum StoreReader {
  struct Loaded {
    var format: PlistBackend.Format
    var schemas: [EntitySchema]
    var rows: [(entity: String, rows: [Row])]
    /// The migration steps the header records.
    var migrations: [MigrationRecord] = []
    /// The change feed the header records, if the store records one.
    var feed: RecordedChangeLog?
  }

  static func load(_ data: [UInt8], file: StoreFile) throws -> Loaded {
    func corrupt(_ what: String) -> CofferError {
      file.error(
        .corruptStore,
        "\(file.path) \(what). The file was left as it is: restore it from a backup, or move it away to start a new store."
      )
    }
    guard !data.isEmpty else { throw corrupt("is empty (a truncated write by another program?)") }
    do {
      if BinaryPlistReader.isBinary(data) {
        return try loadBinary(data, file: file)
      } else if looksLikeXML(data) {
        return try loadXML(data, file: file)
      }
    } catch let error as PlistSyntaxError {
      throw corrupt("is damaged or truncated: it does not parse as a property list \(error)")
    } catch let error as LayoutError {
      let text = error.description
      let isSentence = ["is ", "has ", "does "].contains { text.hasPrefix($0) }
      throw corrupt(isSentence ? text : "does not follow the store layout: \(text)")
    }
    throw corrupt("is not a property list")
  }

  static func loadXML(_ data: [UInt8], file: StoreFile) throws -> Loaded {
    do {
      return try decodeXML(data, file: file)
    } catch is LayoutError {
      // A file that breaks the layout is read again as one tree, so that the error reported is
      // the one a whole parse finds first (a syntax error later in the file wins).
      return try loadXMLTree(data, file: file)
    }
  }

  /// Reads an XML store in one pass, decoding rows straight into ``Row``s once the header and
  /// schemas have been read and checked (``XMLStoreDecoder``).
  static func decodeXML(_ data: [UInt8], file: StoreFile) throws -> Loaded {
    var checked: [EntitySchema]?
    let document = try XMLStoreDecoder.read(data) { entries in
      guard let marker = first(StoreLayout.marker, in: entries), let schemas = first("schemas", in: entries)
      else {
        return nil
      }
      checked = try? header(marker, schemas: schemas, file: file)
      return checked
    }
    guard let root = document.root else { throw LayoutError.notAStore }
    let schemas =
      try checked
      ?? header(first(StoreLayout.marker, in: root), schemas: first("schemas", in: root), file: file)
    let migrations = try StoreLayout.migrations(in: first(StoreLayout.marker, in: root))
    let feed = try StoreLayout.feed(in: first(StoreLayout.marker, in: root))
    if let rows = document.rows {
      return Loaded(format: .xml, schemas: schemas, rows: rows, migrations: migrations, feed: feed)
    }
    return Loaded(
      format: .xml, schemas: schemas, rows: try rows(first("entities", in: root), schemas: schemas),
      migrations: migrations, feed: feed)
  }

  /// Reads an XML store as one value tree, then converts it.
  static func loadXMLTree(_ data: [UInt8], file: StoreFile) throws -> Loaded {
    guard case .dict(let root) = try XMLPlistReader.parse(data) else { throw LayoutError.notAStore }
    let schemas = try header(
      first(StoreLayout.marker, in: root), schemas: first("schemas", in: root), file: file)
    return Loaded(
      format: .xml, schemas: schemas, rows: try rows(first("entities", in: root), schemas: schemas),
      migrations: try StoreLayout.migrations(in: first(StoreLayout.marker, in: root)),
      feed: try StoreLayout.feed(in: first(StoreLayout.marker, in: root)))
  }

  private static func first(_ key: String, in entries: [(key: String, value: PlistValue)]) -> PlistValue? {
    entries.first { $0.key == key }?.value
  }

  /// The rows of an `entities` value tree.
  private static func rows(_ entities: PlistValue?, schemas: [EntitySchema]) throws -> [(
    entity: String, rows: [Row]
  )] {
    guard let entities else { return [] }
    guard case .dict(let list) = entities else {
      throw LayoutError.layout("'entities' is not a dictionary")
    }
    var rows: [(entity: String, rows: [Row])] = []
    for entry in list {
      let schema = try schemaOf(entry.key, in: schemas)
      guard case .array(let items) = entry.value else {
        throw LayoutError.layout("entity '\(entry.key)' is not an array")
      }
      var decoded: [Row] = []
      decoded.reserveCapacity(items.count)
      for (index, item) in items.enumerated() {
        decoded.append(try StoreLayout.row(item, schema: schema, index: index))
      }
      rows.append((entry.key, decoded))
    }
    return rows
  }

  private static func loadBinary(_ data: [UInt8], file: StoreFile) throws -> Loaded {
    let reader = try BinaryPlistReader(data)
    let root: [(key: String, value: Int)]
    do {
      root = try reader.entries(of: reader.top)
    } catch {
      throw LayoutError.notAStore
    }
    func object(_ key: String) -> Int? { root.first { $0.key == key }?.value }
    let headerValue = try object(StoreLayout.marker).map(reader.value)
    let schemas = try header(headerValue, schemas: try object("schemas").map(reader.value), file: file)
    var rows: [(entity: String, rows: [Row])] = []
    if let entities = object("entities") {
      for entry in try reader.entries(of: entities) {
        var decoder = BinaryRowDecoder(reader: reader, schema: try schemaOf(entry.key, in: schemas))
        rows.append((entry.key, try decoder.rows(ofArray: entry.value)))
      }
    }
    return Loaded(
      format: .binary, schemas: schemas, rows: rows, migrations: try StoreLayout.migrations(in: headerValue),
      feed: try StoreLayout.feed(in: headerValue))
  }

  /// Checks the header and reads the schemas.
  private static func header(_ header: PlistValue?, schemas: PlistValue?, file: StoreFile) throws
    -> [EntitySchema]
  {
    guard let header else { throw LayoutError.notAStore }
    guard case .string(StoreLayout.formatName)? = header["format"],
      case .integer(let version)? = header["version"]
    else {
      throw LayoutError("has a \(StoreLayout.marker) header without a valid format and version")
    }
    guard version <= StoreLayout.version else {
      throw file.error(
        .corruptStore,
        "\(file.path) was written in plist store format version \(version) by a newer Coffer; this build reads up to "
          + "version \(StoreLayout.version). Open it with a newer Coffer. The file was left as it is.")
    }
    guard let schemas else { return [] }
    guard case .dict(let entries) = schemas else { throw LayoutError.layout("'schemas' is not a dictionary") }
    return try entries.map { try StoreLayout.schema(named: $0.key, from: $0.value) }
  }

  static func schemaOf(_ entity: String, in schemas: [EntitySchema]) throws -> EntitySchema {
    guard let schema = schemas.first(where: { $0.name == entity }) else {
      throw LayoutError.layout("entity '\(entity)' has rows but no schema")
    }
    return schema
  }

  static func looksLikeXML(_ data: [UInt8]) -> Bool {
    var start = data.startIndex
    if data.starts(with: [0xEF, 0xBB, 0xBF]) { start += 3 }
    while start < data.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(data[start]) { start += 1 }
    return data[start...].starts(with: Array("<?xml".utf8))
      || data[start...].starts(with: Array("<plist".utf8))
      || data[start...].starts(with: Array("<!DOCTYPE".utf8))
  }
}

extension LayoutError {
  static let notAStore = LayoutError(
    "is a property list but not a Coffer store (it has no \(StoreLayout.marker) header)")
  static func layout(_ what: String) -> LayoutError { LayoutError(what) }
}
