@_spi(Backend) import Coffer
import Foundation
import PostgresNIO

/// The current row of a read, decoded from the server's binary cells. One instance serves
/// every row of a read; it is valid until the next row is loaded.
final class PostgresFields: StoredFields {
  private let kinds: [FieldKind]
  private var values: [Value]
  let count: Int

  init(kinds: [FieldKind]) {
    self.kinds = kinds
    self.count = kinds.count
    self.values = Array(repeating: .null, count: kinds.count)
  }

  /// Decodes a row's cells.
  func load(_ row: PostgresRow) throws {
    var position = 0
    for cell in row {
      guard position < count else { break }
      values[position] = try PostgresValues.read(cell.bytes, as: kinds[position])
      position += 1
    }
    guard position == count else { throw PostgresValues.malformed(kinds[min(position, count - 1)]) }
  }

  var row: Row? { Row(values) }

  func value(at position: Int) throws -> Value { values[position] }

  func isNull(at position: Int) -> Bool { position < count && values[position].isNull }
}
