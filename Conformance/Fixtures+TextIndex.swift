@_spi(Backend) import Coffer
import Foundation

/// ``Cell`` with a text index on `text`: the same entity (`Cell`) and fields, `Storable` through
/// `Codable` alone, so preparing one after the other adds or drops the text index by schema
/// evolution.
struct IndexedCell: Codable, Storable, Equatable {
  var id: Int64
  var text: String?
  var date: Date?
  var uuid: UUID?
  var bytes: Data?
  var double: Double?
  var bool: Bool?

  static var entityName: String { "Cell" }
  static var indexes: [Index] { [.text(on: "text")] }

  init(id: Int64, text: String?, double: Double? = nil) {
    self.id = id
    self.text = text
    self.double = double
  }

  init(_ cell: Cell) {
    self.init(id: cell.id, text: cell.text, double: cell.double)
  }
}
