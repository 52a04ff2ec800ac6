import Foundation

/// How nested `Codable` values become ``Value/document(_:)`` bytes: canonical JSON with sorted
/// keys, dates as their exact `Double` reference time, non-finite floats as strings, so that a
/// document decodes to exactly the value that was encoded.
@_spi(Backend) public enum DocumentCoding {
  /// The canonical JSON of a value.
  public static func encode<T: Encodable>(_ value: T) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    encoder.dateEncodingStrategy = .deferredToDate
    encoder.nonConformingFloatEncodingStrategy = .convertToString(
      positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    return try encoder.encode(value)
  }

  /// The value canonical JSON holds.
  public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .deferredToDate
    decoder.nonConformingFloatDecodingStrategy = .convertFromString(
      positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
    return try decoder.decode(type, from: data)
  }
}
