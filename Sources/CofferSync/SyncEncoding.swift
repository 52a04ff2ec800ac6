import Coffer
import Foundation

/// The bytes a row's sync state is kept in: a version byte, the id, the tombstone, then each
/// field's name, clock and value. Counts are unsigned LEB128; integers, doubles and dates 8
/// bytes little-endian; strings and bytes counted.
enum SyncEncoding {
  static let version: UInt8 = 1

  struct Writer {
    var bytes: [UInt8] = []

    mutating func byte(_ byte: UInt8) { bytes.append(byte) }

    mutating func count(_ count: Int) {
      var rest = UInt64(count)
      while rest >= 0x80 {
        bytes.append(UInt8(rest & 0x7f) | 0x80)
        rest >>= 7
      }
      bytes.append(UInt8(rest))
    }

    mutating func fixed(_ bits: UInt64) {
      withUnsafeBytes(of: bits.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func string(_ text: String) {
      count(text.utf8.count)
      bytes.append(contentsOf: text.utf8)
    }

    mutating func data(_ data: Data) {
      count(data.count)
      bytes.append(contentsOf: data)
    }

    mutating func clock(_ clock: SyncClock) {
      fixed(UInt64(bitPattern: clock.physical))
      fixed(UInt64(bitPattern: clock.logical))
      string(clock.replica)
    }

    mutating func value(_ value: Value) {
      switch value {
      case .null: byte(0)
      case .bool(let flag): byte(flag ? 2 : 1)
      case .int(let number):
        byte(3)
        fixed(UInt64(bitPattern: number))
      case .double(let number):
        byte(4)
        fixed(number.bitPattern)
      case .string(let text):
        byte(5)
        string(text)
      case .bytes(let data):
        byte(6)
        self.data(data)
      case .date(let date):
        byte(7)
        fixed(UInt64(bitPattern: Value.microseconds(since1970: date)))
      case .uuid(let uuid):
        byte(8)
        withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
      case .document(let data):
        byte(9)
        self.data(data)
      }
    }
  }

  struct Reader {
    let bytes: [UInt8]
    var offset = 0

    struct Damaged: Error {}

    mutating func byte() throws -> UInt8 {
      guard offset < bytes.count else { throw Damaged() }
      defer { offset += 1 }
      return bytes[offset]
    }

    mutating func count() throws -> Int {
      var result: UInt64 = 0
      var shift: UInt64 = 0
      while true {
        let next = try byte()
        guard shift < 63 else { throw Damaged() }
        result |= UInt64(next & 0x7f) << shift
        if next & 0x80 == 0 { break }
        shift += 7
      }
      guard result < 1 << 40 else { throw Damaged() }
      return Int(result)
    }

    mutating func fixed() throws -> UInt64 {
      guard bytes.count - offset >= 8 else { throw Damaged() }
      var bits: UInt64 = 0
      for index in 0..<8 { bits |= UInt64(bytes[offset + index]) << UInt64(index * 8) }
      offset += 8
      return bits
    }

    mutating func slice() throws -> ArraySlice<UInt8> {
      let length = try count()
      guard bytes.count - offset >= length else { throw Damaged() }
      defer { offset += length }
      return bytes[offset..<offset + length]
    }

    mutating func string() throws -> String {
      guard let text = String(validating: try slice(), as: UTF8.self) else { throw Damaged() }
      return text
    }

    mutating func clock() throws -> SyncClock {
      let physical = Int64(bitPattern: try fixed())
      let logical = Int64(bitPattern: try fixed())
      return SyncClock(physical: physical, logical: logical, replica: try string())
    }

    mutating func value() throws -> Value {
      switch try byte() {
      case 0: return .null
      case 1: return .bool(false)
      case 2: return .bool(true)
      case 3: return .int(Int64(bitPattern: try fixed()))
      case 4: return .double(Double(bitPattern: try fixed()))
      case 5: return .string(try string())
      case 6: return .bytes(Data(try slice()))
      case 7: return .date(Value.date(microsecondsSince1970: Int64(bitPattern: try fixed())))
      case 8:
        guard bytes.count - offset >= 16 else { throw Damaged() }
        let raw = bytes[offset..<offset + 16]
        offset += 16
        var uuid = UUID().uuid
        withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: raw) }
        return .uuid(UUID(uuid: uuid))
      case 9: return .document(Data(try slice()))
      default: throw Damaged()
      }
    }
  }

  static func encode(_ state: SyncRowState) -> Data {
    var writer = Writer()
    writer.byte(version)
    writer.value(state.id)
    if let deleted = state.deleted {
      writer.byte(1)
      writer.clock(deleted)
    } else {
      writer.byte(0)
    }
    writer.count(state.fields.count)
    for name in state.fields.keys.sorted() {
      guard let stamped = state.fields[name] else { continue }
      writer.string(name)
      writer.clock(stamped.clock)
      writer.value(stamped.value)
    }
    return Data(writer.bytes)
  }

  static func decode(_ data: Data, entity: String, store: String?) throws -> SyncRowState {
    var reader = Reader(bytes: [UInt8](data))
    do {
      guard try reader.byte() == version else { throw Reader.Damaged() }
      let id = try reader.value()
      var deleted: SyncClock?
      if try reader.byte() == 1 { deleted = try reader.clock() }
      var fields: [String: SyncRowState.Stamped] = [:]
      for _ in 0..<(try reader.count()) {
        let name = try reader.string()
        let clock = try reader.clock()
        fields[name] = SyncRowState.Stamped(value: try reader.value(), clock: clock)
      }
      guard reader.offset == reader.bytes.count else { throw Reader.Damaged() }
      return SyncRowState(entity: entity, id: id, fields: fields, deleted: deleted)
    } catch {
      throw CofferError(
        .corruptStore,
        "A sync record of entity '\(entity)' is damaged and cannot be read. Sync this replica again from an "
          + "empty store.", store: store, entity: entity)
    }
  }
}
