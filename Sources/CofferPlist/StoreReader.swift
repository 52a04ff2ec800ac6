import Coffer
import Foundation

/// Reads a store file: detects its format, parses it, and checks it is a Coffer store of a
/// version this build understands. Errors name the path and say what to do; the file is never
/// changed here.
enum StoreReader {
  struct Loaded {
    var format: PlistBackend.Format
    var schemas: [EntitySchema]
    var rows: [(entity: String, rows: [Row])]
  }

  static func load(_ data: Data, file: StoreFile) throws -> Loaded {
    func corrupt(_ what: String) -> CofferError {
      file.error(
        .corruptStore,
        "\(file.path) \(what). The file was left as it is: restore it from a backup, or move it away to start a new store."
      )
    }
    guard !data.isEmpty else { throw corrupt("is empty (a truncated write by another program?)") }
    let format: PlistBackend.Format
    let root: PlistValue
    do {
      if BinaryPlistReader.isBinary(data) {
        format = .binary
        root = try BinaryPlistReader.parse(data)
      } else if looksLikeXML(data) {
        format = .xml
        root = try XMLPlistReader.parse(data)
      } else {
        throw corrupt("is not a property list")
      }
    } catch let error as PlistSyntaxError {
      throw corrupt("is damaged or truncated: it does not parse as a property list \(error)")
    }
    guard case .dict = root, let header = root[StoreLayout.marker] else {
      throw corrupt("is a property list but not a Coffer store (it has no \(StoreLayout.marker) header)")
    }
    guard case .string(StoreLayout.formatName)? = header["format"],
      case .integer(let version)? = header["version"]
    else {
      throw corrupt("has a \(StoreLayout.marker) header without a valid format and version")
    }
    guard version <= StoreLayout.version else {
      throw file.error(
        .corruptStore,
        "\(file.path) was written in plist store format version \(version) by a newer Coffer; this build reads up to "
          + "version \(StoreLayout.version). Open it with a newer Coffer. The file was left as it is.")
    }
    do {
      var schemas: [EntitySchema] = []
      if case .dict(let entries)? = root["schemas"] {
        for entry in entries { schemas.append(try StoreLayout.schema(named: entry.key, from: entry.value)) }
      } else if root["schemas"] != nil {
        throw LayoutError("'schemas' is not a dictionary")
      }
      var rows: [(entity: String, rows: [Row])] = []
      if case .dict(let entries)? = root["entities"] {
        for entry in entries {
          guard let schema = schemas.first(where: { $0.name == entry.key }) else {
            throw LayoutError("entity '\(entry.key)' has rows but no schema")
          }
          guard case .array(let items) = entry.value else {
            throw LayoutError("entity '\(entry.key)' is not an array")
          }
          var decoded: [Row] = []
          decoded.reserveCapacity(items.count)
          for (index, item) in items.enumerated() {
            decoded.append(try StoreLayout.row(item, schema: schema, index: index))
          }
          rows.append((entry.key, decoded))
        }
      } else if root["entities"] != nil {
        throw LayoutError("'entities' is not a dictionary")
      }
      return Loaded(format: format, schemas: schemas, rows: rows)
    } catch let error as LayoutError {
      throw corrupt("does not follow the store layout: \(error)")
    }
  }

  static func looksLikeXML(_ data: Data) -> Bool {
    var start = data.startIndex
    if data.starts(with: [0xEF, 0xBB, 0xBF]) { start += 3 }
    while start < data.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(data[start]) { start += 1 }
    return data[start...].starts(with: Array("<?xml".utf8))
      || data[start...].starts(with: Array("<plist".utf8))
      || data[start...].starts(with: Array("<!DOCTYPE".utf8))
  }
}
