import Coffer
import Foundation

/// A stored row read in place from its bytes in the memory map: ``load(_:key:)`` checks the
/// whole row once, as ``RowCodec`` does, and notes where each value starts; the accessors then
/// build each value straight from its bytes, with no ``Coffer/Row`` in between.
///
/// One instance is reused for every row of a read; it is valid until the next `load` or the end
/// of the read transaction.
final class LMDBFields: StoredFields {
  let handle: EntityHandle
  /// Where each value's tag is, by field position.
  private var offsets: [Int]
  private var bytes = UnsafeRawBufferPointer(start: nil, count: 0)

  init(handle: EntityHandle) {
    self.handle = handle
    self.offsets = Array(repeating: 0, count: handle.kinds.count)
  }

  var count: Int { offsets.count }
  var schema: EntitySchema { handle.schema }

  /// Takes the bytes of a row written under the handle's layout, checking every tag, kind and
  /// length; throws ``RowDamage/otherLayout(_:)`` for a row of another layout.
  func load(_ row: UnsafeRawBufferPointer) throws(RowDamage) {
    let kinds = handle.kinds
    var reader = ByteReader(row)
    let stored = try reader.header()
    guard stored == handle.layout else { throw .otherLayout(stored) }
    let count = try reader.length()
    guard count == kinds.count else {
      throw .malformed("it holds \(count) values but its schema has \(kinds.count) fields")
    }
    for position in 0..<count {
      offsets[position] = reader.position
      if let kind = try RowCodec.skipValue(in: &reader, named: self.name(position)), kind != kinds[position] {
        throw .malformed("field '\(name(position))' holds a \(kind) but is declared \(kinds[position])")
      }
    }
    guard reader.isAtEnd else { throw .malformed("it has \(reader.remaining) bytes after its last value") }
    bytes = row
  }

  private func name(_ position: Int) -> String { handle.schema.fields[position].name }

  /// The tag of a value, and a reader positioned at its payload.
  private func payload(_ position: Int) -> (tag: UInt8, reader: ByteReader) {
    let offset = offsets[position]
    return (bytes[offset], ByteReader(bytes, at: offset + 1))
  }

  func value(at position: Int) throws -> Value {
    var reader = ByteReader(bytes, at: offsets[position])
    do {
      return try RowCodec.value(from: &reader, named: name(position))
    } catch {
      // `load` checked this value already: only a row changed under a live read gets here.
      throw CofferError(
        .corruptStore, "A \(handle.schema.name) row changed while it was read.", entity: handle.schema.name,
        field: name(position))
    }
  }

  func isNull(at position: Int) -> Bool { bytes[offsets[position]] == 0 }

  func int(at position: Int) -> Int64? {
    var (tag, reader) = payload(position)
    guard tag == 3, let number = try? reader.varint() else { return nil }
    return RowCodec.unzigzag(number)
  }

  func double(at position: Int) -> Double? {
    var (tag, reader) = payload(position)
    guard tag == 4, let bits = try? reader.fixed(UInt64.self) else { return nil }
    return Double(bitPattern: UInt64(littleEndian: bits))
  }

  func bool(at position: Int) -> Bool? {
    switch bytes[offsets[position]] {
    case 1: false
    case 2: true
    default: nil
    }
  }

  func string(at position: Int) -> String? {
    var (tag, reader) = payload(position)
    guard tag == 5, let length = try? reader.length(), let text = try? reader.bytes(length) else {
      return nil
    }
    // `load` checked that the bytes are UTF-8.
    return String(decoding: text, as: UTF8.self)
  }

  func date(at position: Int) -> Date? {
    var (tag, reader) = payload(position)
    guard tag == 7, let number = try? reader.varint() else { return nil }
    return Value.date(microsecondsSince1970: RowCodec.unzigzag(number))
  }
}
