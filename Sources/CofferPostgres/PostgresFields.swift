@_spi(Backend) import Coffer
import Foundation
import NIOCore
import PostgresNIO

/// The current row of a read: its cells' binary bytes, each decoded only when a field is asked
/// for, straight into the type asked (no ``Coffer/Value`` or ``Coffer/Row`` in between for the
/// typed accessors). One instance serves every row of a read; it is valid until the next row
/// is loaded.
final class PostgresFields: StoredFields {
  private let kinds: [FieldKind]
  private var cells: [ByteBuffer?]
  let count: Int

  init(kinds: [FieldKind]) {
    self.kinds = kinds
    self.count = kinds.count
    self.cells = Array(repeating: nil, count: kinds.count)
  }

  /// Takes a row's cells.
  func load(_ row: PostgresRow) throws {
    var position = 0
    for cell in row {
      guard position < count else { break }
      cells[position] = cell.bytes
      position += 1
    }
    guard position == count else { throw PostgresValues.malformed(kinds[min(position, count - 1)]) }
  }

  /// The row as values.
  func values() throws -> [Value] {
    try (0..<count).map { try value(at: $0) }
  }

  func value(at position: Int) throws -> Value {
    try PostgresValues.read(cells[position], as: kinds[position])
  }

  func isNull(at position: Int) -> Bool { position < count && cells[position] == nil }

  func int(at position: Int) -> Int64? {
    guard position < count, kinds[position] == .int else { return nil }
    return cells[position]?.getInteger(at: cells[position]?.readerIndex ?? 0, as: Int64.self)
  }

  func double(at position: Int) -> Double? {
    guard position < count, kinds[position] == .double, let cell = cells[position],
      let bits = cell.getInteger(at: cell.readerIndex, as: UInt64.self)
    else { return nil }
    return Double(bitPattern: bits)
  }

  func bool(at position: Int) -> Bool? {
    guard position < count, kinds[position] == .bool, let cell = cells[position],
      let byte = cell.getInteger(at: cell.readerIndex, as: UInt8.self)
    else { return nil }
    return byte != 0
  }

  func string(at position: Int) -> String? {
    guard position < count, kinds[position] == .string, let cell = cells[position] else { return nil }
    return PostgresText.string(cell)
  }

  func uuid(at position: Int) -> UUID? {
    guard position < count, kinds[position] == .uuid, let cell = cells[position], cell.readableBytes == 16
    else {
      return nil
    }
    return cell.withUnsafeReadableBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
  }

  func date(at position: Int) -> Date? {
    guard position < count, kinds[position] == .date, case .date(let date)? = try? value(at: position) else {
      return nil
    }
    return date
  }
}
