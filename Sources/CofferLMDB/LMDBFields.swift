import Coffer
import Foundation

/// A stored row read in place from its bytes in the memory map: ``load(_:)`` checks the whole
/// row once with ``RowCodec/slots(_:kinds:layout:schema:_:)``, the same walk the row decoder
/// makes, and keeps each value's slot; the accessors then build each value straight from its
/// slot, with no ``Coffer/Row`` in between.
///
/// One instance is reused for every row of a read; it is valid until the next `load` or the end
/// of the read transaction.
final class LMDBFields: StoredFields {
  let handle: EntityHandle
  let count: Int
  /// The slots, by field position. Only this instance writes them, and only in `load`.
  private let slots: UnsafeMutableBufferPointer<RowCodec.Slot>
  @exclusivity(unchecked) private var bytes = UnsafeRawBufferPointer(start: nil, count: 0)

  init(handle: EntityHandle) {
    self.handle = handle
    self.count = handle.kinds.count
    self.slots = .allocate(capacity: handle.kinds.count)
    slots.initialize(repeating: RowCodec.Slot())
  }

  deinit { slots.deallocate() }

  var schema: EntitySchema { handle.schema }

  /// Takes the bytes of a row written under the handle's layout, checking them as the row
  /// decoder does; throws ``RowDamage/otherLayout(_:)`` for a row of another layout.
  func load(_ row: UnsafeRawBufferPointer) throws(RowDamage) {
    try RowCodec.slots(row, kinds: handle.kinds, layout: handle.layout, schema: handle.schema) {
      position, slot in
      slots[position] = slot
    }
    bytes = row
  }

  /// The slot of a position; a null one past the last field.
  private func slot(_ position: Int) -> RowCodec.Slot { position < count ? slots[position] : RowCodec.Slot() }

  func value(at position: Int) -> Value { RowCodec.value(slots[position], in: bytes) }

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
    return String(
      decoding: UnsafeRawBufferPointer(rebasing: bytes[slot.start..<(slot.start + slot.length)]),
      as: UTF8.self)
  }

  func date(at position: Int) -> Date? {
    let slot = slot(position)
    return slot.tag == 7 ? Value.date(microsecondsSince1970: RowCodec.unzigzag(slot.number)) : nil
  }
}
