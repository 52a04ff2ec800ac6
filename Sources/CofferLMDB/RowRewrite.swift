import CLMDB
@_spi(Backend) import Coffer

/// How ``LMDBSchemaEditor/copyRows(from:into:converting:)`` turns a stored row of one entity
/// into a row of another with the same fields, some converted: which positions change and how,
/// and which values the target's indexes need. Made once per copy.
struct RowRewrite {
  /// The conversion at each position (`nil` where the value is copied as it is).
  let conversions: [FieldConversion.BuiltIn?]
  /// The positions that have a conversion, in order.
  let converted: [Int]
  /// The positions whose values the target's indexes read, and the id's.
  let needed: [Int]

  /// `nil` when the copy cannot be done in place: a field count or kind that does not match,
  /// a converted id, or a conversion other than int to string and bool to int.
  init?(from source: EntitySchema, into target: EntitySchema, converting: [Int: FieldConversion.BuiltIn]) {
    guard source.fields.count == target.fields.count, source.idPosition == target.idPosition,
      converting[source.idPosition] == nil
    else { return nil }
    var conversions: [FieldConversion.BuiltIn?] = []
    for (position, (old, new)) in zip(source.fields, target.fields).enumerated() {
      let conversion = converting[position]
      switch conversion {
      case nil where old.kind == new.kind: break
      case .intToString where old.kind == .int && new.kind == .string: break
      case .boolToInt where old.kind == .bool && new.kind == .int: break
      default: return nil
      }
      conversions.append(conversion)
    }
    self.conversions = conversions
    self.converted = conversions.indices.filter { conversions[$0] != nil }
    var needed: Set<Int> = [target.idPosition]
    for index in target.indexes {
      for field in index.fields { if let position = target.position(of: field) { needed.insert(position) } }
    }
    self.needed = needed.sorted()
  }

  /// Writes the row `bytes` (under id `key`) as a row of `into` into `output`, and the values
  /// at ``needed``, converted, into `values` (which has a place for every field), for the
  /// index entries.
  func rewrite(
    _ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, from: EntityHandle, into: EntityHandle,
    backend: LMDBBackend, in transaction: Transaction, output: inout [UInt8], values: inout [Value]
  ) throws {
    let count = conversions.count
    output.removeAll(keepingCapacity: true)
    do {
      try withUnsafeTemporaryAllocation(of: RowCodec.Slot.self, capacity: count) { slots throws(RowDamage) in
        try withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { ends throws(RowDamage) in
          let first = try from.shape.slots(bytes, into: slots, ends: ends)
          RowCodec.appendHeader(layout: into.layout, count: count, to: &output)
          // The bytes from `kept` on are copied as they are, up to the next converted value.
          var kept = first
          for position in converted {
            let slot = slots[position]
            let value: Value
            switch (conversions[position], slot.tag) {
            case (.intToString, 3): value = .string(String(RowCodec.unzigzag(slot.number)))
            case (.boolToInt, 1), (.boolToInt, 2): value = .int(slot.tag == 2 ? 1 : 0)
            default:
              // A null stays null, written the same way in either kind.
              values[position] = .null
              continue
            }
            let start = position == 0 ? first : ends[position - 1]
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[kept..<start]))
            RowCodec.append(value, to: &output)
            values[position] = value
            kept = ends[position]
          }
          output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[kept...]))
          for position in needed where conversions[position] == nil {
            values[position] = try RowCodec.value(
              slots[position], in: bytes, field: position, of: from.schema)
          }
        }
      }
    } catch .otherLayout {
      // Written before the entity's schema last changed: evolved into it, then encoded whole.
      var evolved = try backend.decode(bytes, key: key, handle: from, in: transaction)
      for (position, conversion) in conversions.enumerated() {
        guard let conversion, !evolved[position].isNull else { continue }
        evolved[position] = try conversion.convert(evolved[position])
      }
      RowCodec.encode(evolved, layout: into.layout, into: &output)
      values = evolved
    } catch {
      throw backend.damage(error, key: key, schema: from.schema)
    }
  }
}
