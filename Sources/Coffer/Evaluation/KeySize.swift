import Foundation

/// How large an id, and the entry a row makes in an index, may be: one limit that every backend
/// holds, checked in the core before a batch reaches a backend, so a value too long to index is
/// the same ``CofferError/Code/invalidValue`` on every store.
///
/// The size of a value, in bytes:
///
/// | value | size |
/// |---|---|
/// | null | 1 |
/// | bool | 2 |
/// | int, double, date | 9 |
/// | UUID | 17 |
/// | String, bytes | 3 + its bytes (UTF-8 for a String), + 1 for each zero byte |
///
/// An id's size is its value's; an index entry's is the sum of its fields' values' sizes. Both
/// may be at most ``maximumBytes``: a String of up to 508 UTF-8 bytes fits as an id or in an
/// index of one field. (These are the bytes of LMDB's order-preserving key, the tightest of the
/// engines: liblmdb holds at most 511 bytes in a key.)
@_spi(Backend) public enum KeySize {
  /// The most bytes an id or an index entry may take: 511.
  public static let maximumBytes = 511

  /// The size of a value in an id or an index entry.
  public static func of(_ value: Value) -> Int {
    switch value {
    case .null: 1
    case .bool: 2
    case .int, .double, .date: 9
    case .uuid: 17
    case .string(let text): variable(count: text.utf8.count) { text.utf8.zeroBytes }
    case .bytes(let data), .document(let data): variable(count: data.count) { data.zeroBytes }
    }
  }

  /// The size of a String or bytes value of `count` bytes; the zero bytes are counted only
  /// when the value could otherwise fit, so a long value is never scanned.
  private static func variable(count: Int, zeroBytes: () -> Int) -> Int {
    let size = 3 + count
    return size > maximumBytes ? size : size + zeroBytes()
  }

  /// The most ``of(_:)`` can be for a value of this many bytes: every byte zero.
  private static func mostBytes(_ value: Value) -> Int {
    switch value {
    case .string(let text): 3 + 2 * text.utf8.count
    case .bytes(let data), .document(let data): 3 + 2 * data.count
    default: of(value)
    }
  }

  /// Checks the id and every index entry of a row (in the schema's field order).
  ///
  /// - Throws: ``CofferError/Code/invalidValue`` naming the entity, the id (unless the id is
  ///   what is too long) and the field or fields, never the value.
  static func check(_ row: Row, schema: EntitySchema) throws {
    let id = row[schema.idPosition]
    if schema.storage.idHasVariableSize {
      let size = of(id)
      if size > maximumBytes {
        throw CofferError(
          .invalidValue,
          "A \(schema.name) row has an id of \(size) bytes as a key; an id may be at most \(maximumBytes) "
            + "bytes on every backend (a String id at most 508 UTF-8 bytes). Use a shorter id. Nothing in the "
            + "batch was applied.",
          entity: schema.name, field: schema.idField.name)
      }
    }
    for positions in schema.storage.variableSizeIndexes {
      // Zero bytes are counted only when the entry could be too long with all of them.
      var size = 0
      for position in positions { size += mostBytes(row[position]) }
      if size <= maximumBytes { continue }
      size = 0
      for position in positions { size += of(row[position]) }
      if size > maximumBytes {
        let fields = positions.map { schema.fields[$0].name }.joined(separator: ", ")
        throw CofferError(
          .invalidValue,
          "\(schema.name) \(id) would make an index entry of \(size) bytes from \(fields); an index entry may "
            + "be at most \(maximumBytes) bytes on every backend (a String alone in an index at most 508 UTF-8 "
            + "bytes). Shorten the value or remove the index. Nothing in the batch was applied.",
          entity: schema.name, id: id, field: positions.map { schema.fields[$0].name }.joined(separator: ","))
      }
    }
  }

  /// Checks a value an update by query sets: its own size, with the least every other field of
  /// each index it is in takes. (The whole entry of an index over several fields depends on
  /// rows the core does not read; a backend refuses an entry that is still too long.)
  ///
  /// - Throws: ``CofferError/Code/invalidValue`` naming the entity and field, never the value.
  static func check(_ value: Value, setting position: Int, schema: EntitySchema) throws {
    for positions in schema.storage.variableSizeIndexes where positions.contains(position) {
      let size = of(value) + positions.count - 1
      if size > maximumBytes {
        let field = schema.fields[position].name
        throw CofferError(
          .invalidValue,
          "Setting \(schema.name).\(field) to a value of \(of(value)) bytes as a key would make index entries "
            + "longer than the \(maximumBytes) bytes every backend holds. Shorten the value or remove the index.",
          entity: schema.name, field: field)
      }
    }
  }
}

extension Sequence<UInt8> {
  /// How many of the bytes are zero.
  fileprivate var zeroBytes: Int { reduce(0) { $0 + ($1 == 0 ? 1 : 0) } }
}
