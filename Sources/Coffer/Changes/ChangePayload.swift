import Foundation

/// The form a batch's row changes are recorded in: the same bytes on every backend.
///
/// A version byte; the entities the batch changed, each its name and field names; then each row
/// change: its entity's place in that list, its kind, its id and, unless it is a delete, one
/// value per field. Counts are unsigned LEB128; each value a tag byte and its bytes (integers,
/// doubles and dates as 8 bytes little-endian, strings and bytes counted). Its `Writer` and
/// `Reader` are the package's one encoding of values in bytes: sync keeps its row states in it too.
package enum ChangePayload {
  static let version: UInt8 = 1
  static let insert: UInt8 = 0
  static let update: UInt8 = 1
  static let delete: UInt8 = 2

  /// The payload's bytes appended to an array that grows as needed.
  package struct Writer: ChangePayloadSink {
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func byte(_ byte: UInt8) { bytes.append(byte) }

    package mutating func fixed(_ bits: UInt64) {
      withUnsafeBytes(of: bits.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func raw(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }
  }

  package struct Reader {
    package let bytes: [UInt8]
    package var offset = 0

    package struct Damaged: Error {
      package init() {}
    }

    package init(bytes: [UInt8]) { self.bytes = bytes }

    package mutating func byte() throws -> UInt8 {
      guard offset < bytes.count else { throw Damaged() }
      defer { offset += 1 }
      return bytes[offset]
    }

    package mutating func count() throws -> Int {
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

    package mutating func fixed() throws -> UInt64 {
      guard bytes.count - offset >= 8 else { throw Damaged() }
      var bits: UInt64 = 0
      for index in 0..<8 { bits |= UInt64(bytes[offset + index]) << UInt64(index * 8) }
      offset += 8
      return bits
    }

    package mutating func slice() throws -> ArraySlice<UInt8> {
      let length = try count()
      guard bytes.count - offset >= length else { throw Damaged() }
      defer { offset += length }
      return bytes[offset..<offset + length]
    }

    package mutating func string() throws -> String {
      guard let text = String(validating: try slice(), as: UTF8.self) else { throw Damaged() }
      return text
    }

    package mutating func value() throws -> Value {
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

  /// The row changes of a recorded batch.
  ///
  /// - Throws: ``CofferError/Code/corruptStore`` naming the batch when the bytes are damaged.
  static func decode(_ bytes: [UInt8], store: String?, sequence: UInt64) throws -> [RowChange] {
    var reader = Reader(bytes: bytes)
    do {
      guard try reader.byte() == version else { throw Reader.Damaged() }
      var entities: [(name: String, fields: [String])] = []
      for _ in 0..<(try reader.count()) {
        let name = try reader.string()
        var fields: [String] = []
        for _ in 0..<(try reader.count()) { fields.append(try reader.string()) }
        entities.append((name, fields))
      }
      let count = try reader.count()
      var changes: [RowChange] = []
      changes.reserveCapacity(min(count, bytes.count))
      for _ in 0..<count {
        let place = try reader.count()
        guard place < entities.count else { throw Reader.Damaged() }
        let entity = entities[place]
        let kind = try reader.byte()
        let id = try reader.value()
        switch kind {
        case insert, update:
          var values: [Value] = []
          values.reserveCapacity(entity.fields.count)
          for _ in entity.fields { values.append(try reader.value()) }
          changes.append(
            RowChange(
              entity: entity.name, id: id, kind: kind == insert ? .insert : .update, fields: entity.fields,
              values: values))
        case delete:
          changes.append(
            RowChange(entity: entity.name, id: id, kind: .delete, fields: entity.fields, values: []))
        default:
          throw Reader.Damaged()
        }
      }
      guard reader.offset == bytes.count else { throw Reader.Damaged() }
      return changes
    } catch {
      throw CofferError(
        .corruptStore,
        "Batch \(ChangePosition(sequence: sequence)) of the change feed is damaged and cannot be read. "
          + "Trim the feed past it, and copy the whole store to any replica that still needs it.",
        store: store)
    }
  }
}

/// Where a payload's bytes go: an array that grows (``ChangePayload/Writer``) or memory measured
/// first (`ChangePayload.BufferWriter`). Counts, strings and values are encoded here once, for
/// both.
package protocol ChangePayloadSink {
  /// Writes one byte.
  mutating func byte(_ byte: UInt8)
  /// Writes 8 bytes, little-endian.
  mutating func fixed(_ bits: UInt64)
  /// Writes bytes as they are.
  mutating func raw(_ raw: UnsafeRawBufferPointer)
}

extension ChangePayloadSink {
  /// Writes a count, unsigned LEB128.
  package mutating func count(_ count: Int) {
    var rest = UInt64(count)
    while rest >= 0x80 {
      byte(UInt8(rest & 0x7f) | 0x80)
      rest >>= 7
    }
    byte(UInt8(rest))
  }

  /// Writes a string's UTF-8, counted.
  package mutating func string(_ text: String) {
    var text = text
    text.withUTF8 { utf8 in
      count(utf8.count)
      raw(UnsafeRawBufferPointer(utf8))
    }
  }

  /// Writes bytes, counted.
  package mutating func data(_ data: Data) {
    count(data.count)
    data.withUnsafeBytes { raw($0) }
  }

  /// Writes a value: its tag byte, then its bytes.
  package mutating func value(_ value: Value) {
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
      withUnsafeBytes(of: uuid.uuid) { raw($0) }
    case .document(let data):
      byte(9)
      self.data(data)
    }
  }
}
