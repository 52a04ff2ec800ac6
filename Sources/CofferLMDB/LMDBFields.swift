import Coffer
import Foundation

/// A stored row read in place from its bytes in the memory map: ``load(_:)`` checks the whole
/// row once, as ``RowCodec`` does, and notes each value's tag, number and text span; the
/// accessors then build each value straight from that, with no ``Coffer/Row`` in between.
///
/// One instance is reused for every row of a read; it is valid until the next `load` or the end
/// of the read transaction.
final class LMDBFields: StoredFields {
  /// What `load` learned of one value.
  private struct Slot {
    /// The value's tag (see ``RowCodec``); 0, null, until loaded.
    var tag: UInt8 = 0
    /// A varint as stored (tags 3 and 7), or a double's bits (tag 4).
    var number: UInt64 = 0
    /// Where the tag is.
    var offset = 0
    /// Where a string's, bytes' or document's payload starts, and its length.
    var start = 0
    var length = 0
  }

  let handle: EntityHandle
  let count: Int
  /// The slots, by field position. Only this instance writes them, and only in `load`.
  private let slots: UnsafeMutableBufferPointer<Slot>
  @exclusivity(unchecked) private var bytes = UnsafeRawBufferPointer(start: nil, count: 0)

  init(handle: EntityHandle) {
    self.handle = handle
    self.count = handle.kinds.count
    self.slots = .allocate(capacity: handle.kinds.count)
    slots.initialize(repeating: Slot())
  }

  deinit { slots.deallocate() }

  var schema: EntitySchema { handle.schema }

  /// Takes the bytes of a row written under the handle's layout, checking every tag, kind,
  /// length and string as ``RowCodec/decode(_:kinds:layout:schema:)`` does; throws
  /// ``RowDamage/otherLayout(_:)`` for a row of another layout.
  func load(_ row: UnsafeRawBufferPointer) throws(RowDamage) {
    var reader = ByteReader(row)
    let stored = try reader.header()
    guard stored == handle.layout else { throw .otherLayout(stored) }
    let count = try reader.length()
    guard count == self.count else {
      throw .malformed("it holds \(count) values but its schema has \(self.count) fields")
    }
    try handle.kinds.withUnsafeBufferPointer { kinds throws(RowDamage) in
      for position in 0..<count {
        var slot = Slot(offset: reader.position)
        slot.tag = try reader.byte()
        let kind: FieldKind?
        switch slot.tag {
        case 0: kind = nil
        case 1, 2: kind = .bool
        case 3, 7:
          slot.number = try reader.varint()
          kind = slot.tag == 3 ? .int : .date
        case 4:
          slot.number = UInt64(littleEndian: try reader.fixed(UInt64.self))
          kind = .double
        case 5, 6, 9:
          slot.length = try reader.length()
          slot.start = reader.position
          let payload = try reader.bytes(slot.length)
          if slot.tag == 5, !UTF8Validation.isValid(payload) {
            throw .malformed("field '\(name(position))' holds a string that is not UTF-8")
          }
          kind = slot.tag == 5 ? .string : (slot.tag == 6 ? .bytes : .document)
        case 8:
          _ = try reader.bytes(16)
          kind = .uuid
        default: throw .malformed("field '\(name(position))' has unknown value tag \(slot.tag)")
        }
        if let kind, kind != kinds[position] {
          throw .malformed("field '\(name(position))' holds a \(kind) but is declared \(kinds[position])")
        }
        slots[position] = slot
      }
    }
    guard reader.isAtEnd else { throw .malformed("it has \(reader.remaining) bytes after its last value") }
    bytes = row
  }

  private func name(_ position: Int) -> String { handle.schema.fields[position].name }

  /// The slot of a position; a null one past the last field.
  private func slot(_ position: Int) -> Slot { position < count ? slots[position] : Slot() }

  func value(at position: Int) throws -> Value {
    var reader = ByteReader(bytes, at: slots[position].offset)
    do {
      return try RowCodec.value(from: &reader, named: name(position))
    } catch {
      // `load` checked this value already: the bytes of a read transaction never change.
      throw CofferError(
        .corruptStore, "A \(handle.schema.name) row could not be read again.", entity: handle.schema.name,
        field: name(position))
    }
  }

  func isNull(at position: Int) -> Bool { position < count && slots[position].tag == 0 }

  func int(at position: Int) -> Int64? {
    let slot = slot(position)
    return slot.tag == 3 ? RowCodec.unzigzag(slot.number) : nil
  }

  func double(at position: Int) -> Double? {
    let slot = slot(position)
    return slot.tag == 4 ? Double(bitPattern: slot.number) : nil
  }

  func bool(at position: Int) -> Bool? {
    switch slot(position).tag {
    case 1: false
    case 2: true
    default: nil
    }
  }

  func string(at position: Int) -> String? {
    let slot = slot(position)
    guard slot.tag == 5 else { return nil }
    // `load` checked that the bytes are UTF-8 and lie within the row.
    return String(
      decoding: UnsafeRawBufferPointer(rebasing: bytes[slot.start..<(slot.start + slot.length)]),
      as: UTF8.self)
  }

  func date(at position: Int) -> Date? {
    let slot = slot(position)
    return slot.tag == 7 ? Value.date(microsecondsSince1970: RowCodec.unzigzag(slot.number)) : nil
  }
}
