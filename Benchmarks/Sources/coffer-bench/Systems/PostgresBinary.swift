import Foundation

/// PostgreSQL's binary wire formats for the workload's column types: what raw libpq sends as
/// parameters, in `COPY … (FORMAT binary)` and in the arrays a batch update unnests.
enum PostgresBinary {
  /// Seconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch for timestamps.
  static let epochOffset: Int64 = 946_684_800

  /// The type ids of `bigint`, `text`, `timestamptz` and `boolean`, for array headers.
  enum TypeID: Int32 {
    case int8 = 20
    case text = 25
    case timestamptz = 1184
    case bool = 16
  }

  /// A date as microseconds since 2000-01-01 UTC, rounded like every other system's encoding.
  static func microsecondsSince2000(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1e6).rounded()) - epochOffset * 1_000_000
  }

  /// The date `microseconds` after 2000-01-01 UTC.
  static func date(microsecondsSince2000 microseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(microseconds + epochOffset * 1_000_000) / 1e6)
  }

  static func append(_ value: Int64, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
  }

  static func append(_ value: Int32, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
  }

  static func append(_ value: Int16, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
  }

  /// Appends a field as `COPY` and arrays frame it: its length as an `Int32`, then its bytes.
  static func appendField(_ value: Int64, to bytes: inout [UInt8]) {
    append(Int32(8), to: &bytes)
    append(value, to: &bytes)
  }

  static func appendField(_ value: String, to bytes: inout [UInt8]) {
    append(Int32(value.utf8.count), to: &bytes)
    bytes.append(contentsOf: value.utf8)
  }

  static func appendField(_ value: Bool, to bytes: inout [UInt8]) {
    append(Int32(1), to: &bytes)
    bytes.append(value ? 1 : 0)
  }

  static func appendField(_ value: Date, to bytes: inout [UInt8]) {
    appendField(microsecondsSince2000(value), to: &bytes)
  }

  /// The header of `COPY … (FORMAT binary)`: the signature, no flags, no extension.
  static let copyHeader: [UInt8] =
    Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0, 0, 0, 0, 0]

  /// The trailer of `COPY … (FORMAT binary)`: a field count of -1.
  static let copyTrailer: [UInt8] = [0xFF, 0xFF]

  /// A one-dimensional array without nulls of `count` elements of `type`; `elements` appends
  /// each element as a field (length, then bytes).
  static func appendArray(
    of type: TypeID, count: Int, to bytes: inout [UInt8], _ elements: (inout [UInt8]) -> Void
  ) {
    append(Int32(1), to: &bytes)  // dimensions
    append(Int32(0), to: &bytes)  // no nulls
    append(type.rawValue, to: &bytes)
    append(Int32(count), to: &bytes)
    append(Int32(1), to: &bytes)  // lower bound
    elements(&bytes)
  }
}
