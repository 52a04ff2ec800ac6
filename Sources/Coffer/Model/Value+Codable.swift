import Foundation

/// `Value` encodes as a one-key dictionary naming its kind — `{"int": 42}`, `{"date": 1700000000000000}`
/// (microseconds since 1970), `{"double": "inf"}` for non-finite doubles — so that any format,
/// JSON included, keeps the kind and the exact value.
extension Value: Codable {
  private enum Key: String, CodingKey { case null, bool, int, double, string, bytes, date, uuid, document }

  /// Decodes a value written by ``encode(to:)``.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    guard let key = container.allKeys.first, container.allKeys.count == 1 else {
      throw DecodingError.dataCorrupted(
        .init(
          codingPath: decoder.codingPath, debugDescription: "A stored value must have exactly one kind key."))
    }
    switch key {
    case .null: self = .null
    case .bool: self = .bool(try container.decode(Bool.self, forKey: key))
    case .int: self = .int(try container.decode(Int64.self, forKey: key))
    case .double:
      if let text = try? container.decode(String.self, forKey: key) {
        switch text {
        case "inf": self = .double(.infinity)
        case "-inf": self = .double(-.infinity)
        default:
          throw DecodingError.dataCorruptedError(
            forKey: key, in: container,
            debugDescription: "A text value is not a stored double (only inf and -inf are).")
        }
      } else {
        self = .double(try container.decode(Double.self, forKey: key))
      }
    case .string: self = .string(try container.decode(String.self, forKey: key))
    case .bytes: self = .bytes(try container.decode(Data.self, forKey: key))
    case .date: self = .date(Value.date(microsecondsSince1970: try container.decode(Int64.self, forKey: key)))
    case .uuid: self = .uuid(try container.decode(UUID.self, forKey: key))
    case .document: self = .document(try container.decode(Data.self, forKey: key))
    }
  }

  /// Encodes the value under the name of its kind.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    switch self {
    case .null: try container.encode(true, forKey: .null)
    case .bool(let v): try container.encode(v, forKey: .bool)
    case .int(let v): try container.encode(v, forKey: .int)
    case .double(let v):
      if v.isFinite {
        try container.encode(v, forKey: .double)
      } else if v.isNaN {
        throw EncodingError.invalidValue(
          v, .init(codingPath: encoder.codingPath, debugDescription: "NaN is no value a store can hold."))
      } else {
        try container.encode(v > 0 ? "inf" : "-inf", forKey: .double)
      }
    case .string(let v): try container.encode(v, forKey: .string)
    case .bytes(let v): try container.encode(v, forKey: .bytes)
    case .date(let v): try container.encode(Value.microseconds(since1970: v), forKey: .date)
    case .uuid(let v): try container.encode(v, forKey: .uuid)
    case .document(let v): try container.encode(v, forKey: .document)
    }
  }
}
