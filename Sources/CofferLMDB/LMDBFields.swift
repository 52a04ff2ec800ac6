@_spi(Backend) import Coffer
import Foundation

/// A stored row read in place from its bytes in the memory map: ``load(_:key:)`` checks the
/// whole row once with ``RowCodec/Shape/slots(_:into:)``, the same walk the row
/// decoder makes, and keeps each value's slot; the accessors then build each value straight
/// from its slot, with no ``Coffer/Row`` in between. A string is checked to be UTF-8 as it is
/// made, so a damaged one is reported by ``value(at:)`` when it is read.
///
/// One instance is reused for every row of a read (see ``with(_:backend:_:)``, which lends it
/// its slots); it is valid until the next `load`, the end of the read transaction or the end of
/// `with`, whichever comes first.
final class LMDBFields: StoredFields {
  let handle: EntityHandle
  /// The handle's shape, which every row loaded has.
  private let shape: RowCodec.Shape
  /// The backend, which names the store in errors.
  private let backend: LMDBBackend
  let count: Int
  /// The slots, by field position: memory the creator lends for as long as the instance is
  /// used. Only this instance writes them, and only in `load`.
  private let slots: UnsafeMutableBufferPointer<RowCodec.Slot>
  @exclusivity(unchecked) private var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
  /// The row's id key, which names it in errors.
  @exclusivity(unchecked) private var key = UnsafeRawBufferPointer(start: nil, count: 0)

  private init(handle: EntityHandle, backend: LMDBBackend, slots: UnsafeMutableBufferPointer<RowCodec.Slot>) {
    self.handle = handle
    self.backend = backend
    self.shape = handle.shape
    self.count = handle.shape.kinds.count
    self.slots = slots
  }

  /// Runs `body` with fields for rows of `handle`'s entity, their slots on the stack.
  static func with<R>(
    _ handle: EntityHandle, backend: LMDBBackend, _ body: (LMDBFields) throws -> R
  ) rethrows -> R {
    try withUnsafeTemporaryAllocation(of: RowCodec.Slot.self, capacity: max(1, handle.shape.kinds.count)) {
      slots in
      slots.initialize(repeating: RowCodec.Slot())
      return try body(LMDBFields(handle: handle, backend: backend, slots: slots))
    }
  }

  var schema: EntitySchema { handle.schema }

  /// Takes the bytes of a row written under the handle's layout, and its id key, checking them
  /// as the row decoder does; throws ``RowDamage/otherLayout(_:)`` for a row of another layout.
  func load(_ row: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) throws(RowDamage) {
    try shape.slots(row, into: slots)
    bytes = row
    self.key = key
  }

  /// The slot of a position; a null one past the last field.
  private func slot(_ position: Int) -> RowCodec.Slot { position < count ? slots[position] : RowCodec.Slot() }

  func value(at position: Int) throws -> Value {
    do {
      return try RowCodec.value(slots[position], in: bytes, field: position, of: handle.schema)
    } catch {
      throw backend.damage(error, key: key, schema: handle.schema)
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
    return RowCodec.text(UnsafeRawBufferPointer(rebasing: bytes[slot.start..<(slot.start + slot.length)]))
  }

  func date(at position: Int) -> Date? {
    let slot = slot(position)
    return slot.tag == 7 ? Value.date(microsecondsSince1970: RowCodec.unzigzag(slot.number)) : nil
  }

  func uuid(at position: Int) -> UUID? {
    let slot = slot(position)
    guard slot.tag == 8, slot.length == 16 else { return nil }
    return UUID(
      uuid: UnsafeRawBufferPointer(rebasing: bytes[slot.start..<(slot.start + 16)]).loadUnaligned(
        as: uuid_t.self))
  }
}
