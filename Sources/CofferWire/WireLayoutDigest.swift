@_spi(Backend) import Coffer
import Foundation

/// A short name for a whole ``EntitySchema``, so that a read need not carry the layout of its rows
/// every time (``WireQuery/layoutDigest``): 32 hexadecimal digits of SipHash-2-4 (128 bits, a
/// fixed key) over the schema's JSON with sorted keys.
///
/// The server compares a digest only with its own stored schema's, never with one a client
/// claims, so a client that names a wrong digest only gets its query refused. Two builds whose
/// JSON of the same schema differs compute different digests: their reads then carry the layout.
package enum WireLayoutDigest {
  /// The digest of `schema`.
  package static func of(_ schema: EntitySchema) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    // A schema always encodes: its values are the ones a store holds.
    let data = (try? encoder.encode(schema)) ?? Data(schema.name.utf8)
    var hasher = SipHasher(key0: 0x636f_6666_6572_6c61, key1: 0x796f_7574_6469_6765)
    data.withUnsafeBytes { hasher.combine(bytes: $0) }
    let (low, high) = hasher.finalize128()
    return hex(high) + hex(low)
  }

  private static func hex(_ word: UInt64) -> String {
    let digits = String(word, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }

  /// The digests of the last schema seen for each entity, worked out once per schema: one
  /// comparison of the schema per call after that.
  package final class Cache: Sendable {
    private let entries = LockedState<[String: Entry]>([:])

    private struct Entry {
      var schema: EntitySchema
      var digest: String
      /// Whether the server refused this digest (a client's cache): its reads send the layout.
      var refused = false
    }

    package init() {}

    /// The digest of `schema`, or `nil` when ``refuse(_:)`` was told the server does not take it.
    package func digest(of schema: EntitySchema) -> String? {
      if let entry = entries.withLock({ $0[schema.name] }), entry.schema == schema {
        return entry.refused ? nil : entry.digest
      }
      let digest = WireLayoutDigest.of(schema)
      entries.withLock { $0[schema.name] = Entry(schema: schema, digest: digest) }
      return digest
    }

    /// Notes that the server does not take `schema`'s digest: reads in it send it whole.
    package func refuse(_ schema: EntitySchema) {
      let digest = WireLayoutDigest.of(schema)
      entries.withLock { $0[schema.name] = Entry(schema: schema, digest: digest, refused: true) }
    }
  }
}
