import Coffer
import Foundation

/// The bytes a row's sync state is kept in: a version byte, the id, the tombstone, then each
/// field's name, clock and value (and from version 2 what the change replaced: a byte, then its
/// value and clock), in the change feed's encoding of counts, strings and values.
enum SyncEncoding {
  static let version: UInt8 = 2

  typealias Writer = ChangePayload.Writer
  typealias Reader = ChangePayload.Reader

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
      if let base = stamped.base {
        writer.byte(1)
        writer.value(base.value)
        writer.clock(base.clock)
      } else {
        writer.byte(0)
      }
    }
    return Data(writer.bytes)
  }

  static func decode(_ data: Data, entity: String, store: String?) throws -> SyncRowState {
    var reader = Reader(bytes: [UInt8](data))
    do {
      let format = try reader.byte()
      guard format == 1 || format == version else { throw Reader.Damaged() }
      let id = try reader.value()
      var deleted: SyncClock?
      if try reader.byte() == 1 { deleted = try reader.clock() }
      var fields: [String: SyncRowState.Stamped] = [:]
      for _ in 0..<(try reader.count()) {
        let name = try reader.string()
        let clock = try reader.clock()
        var stamped = SyncRowState.Stamped(value: try reader.value(), clock: clock)
        if format > 1, try reader.byte() == 1 {
          let value = try reader.value()
          stamped.base = SyncRowState.Stamped.Base(value: value, clock: try reader.clock())
        }
        fields[name] = stamped
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

extension ChangePayload.Writer {
  /// A hybrid logical clock: its physical and logical parts 8 bytes each, then its replica.
  mutating func clock(_ clock: SyncClock) {
    fixed(UInt64(bitPattern: clock.physical))
    fixed(UInt64(bitPattern: clock.logical))
    string(clock.replica)
  }
}

extension ChangePayload.Reader {
  /// A clock written by `ChangePayload.Writer.clock(_:)`.
  mutating func clock() throws -> SyncClock {
    let physical = Int64(bitPattern: try fixed())
    let logical = Int64(bitPattern: try fixed())
    return SyncClock(physical: physical, logical: logical, replica: try string())
  }
}
