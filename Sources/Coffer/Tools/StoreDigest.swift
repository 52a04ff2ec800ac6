import Foundation

/// What one entity of a store holds, reduced to a fingerprint that two stores can compare: the
/// stored schema, the number of rows and an order-independent hash of every row.
///
/// The row hash is the sum (per 64-bit half, wrapping) of a 128-bit SipHash-2-4 of each row's
/// canonical encoding, so it does not depend on the order a backend reads rows in, and two
/// stores holding the same rows have the same digest whatever their backends. The canonical
/// encoding (see `Formats.md`) takes fields in name order with their kinds and exact values:
/// doubles bit for bit (so -0.0 differs from 0.0), strings byte for byte, dates to the
/// microsecond. The encoding is stable across releases: a digest may be saved and compared later.
public struct EntityDigest: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The entity's name.
  public var entity: String
  /// The schema its rows are stored in.
  public var schema: EntitySchema
  /// How many rows it holds.
  public var count: Int
  /// The order-independent hash of its rows, as 32 hexadecimal digits.
  public var rowsHash: String

  /// Makes a digest from its parts, e.g. one read back from a file.
  @_spi(Backend) public init(entity: String, schema: EntitySchema, count: Int, rowsHash: String) {
    self.entity = entity
    self.schema = schema
    self.count = count
    self.rowsHash = rowsHash
  }

  /// `Message: 1517 rows, 5f0c…e1` — the name, the count and the hash.
  public var description: String { "\(entity): \(count) row\(count == 1 ? "" : "s"), \(rowsHash)" }
}

/// The digests of a store's entities, sorted by name: ``Store/digest(entities:)``.
///
/// Two stores hold the same data when their digests are equal; ``differences(from:)`` says
/// where they are not.
public struct StoreDigest: Sendable, Hashable, Codable {
  /// One digest per entity, sorted by name.
  public var entities: [EntityDigest]

  /// A store digest from entity digests (sorted here by name).
  @_spi(Backend) public init(entities: [EntityDigest]) {
    self.entities = entities.sorted { $0.entity < $1.entity }
  }

  /// The digest of one entity, or `nil` when the store does not hold it.
  public subscript(entity: String) -> EntityDigest? { entities.first { $0.entity == entity } }

  /// The total number of rows over every entity.
  public var count: Int { entities.reduce(0) { $0 + $1.count } }

  /// What differs between this digest and another, one sentence per entity that differs
  /// (empty when they are equal): an entity only one side holds, a schema, a row count, or
  /// rows whose values differ.
  public func differences(from other: StoreDigest) -> [String] {
    var sentences: [String] = []
    let theirs = Dictionary(other.entities.map { ($0.entity, $0) }, uniquingKeysWith: { first, _ in first })
    let ours = Set(entities.map(\.entity))
    for digest in entities {
      guard let their = theirs[digest.entity] else {
        sentences.append("\(digest.entity): only on the first side (\(digest.count) rows).")
        continue
      }
      if digest.schema != their.schema {
        sentences.append("\(digest.entity): the stored schemas differ.")
      } else if digest.count != their.count {
        sentences.append(
          "\(digest.entity): \(digest.count) rows on the first side, \(their.count) on the second.")
      } else if digest.rowsHash != their.rowsHash {
        sentences.append("\(digest.entity): \(digest.count) rows on each side, but their values differ.")
      }
    }
    for their in other.entities where !ours.contains(their.entity) {
      sentences.append("\(their.entity): only on the second side (\(their.count) rows).")
    }
    return sentences
  }
}

extension Store {
  /// The digest of the store's data: every entity it holds (or only those named), with its
  /// stored schema, row count and order-independent row hash — computed in one snapshot when
  /// the backend has ``SnapshotReading``, so that it describes one state.
  ///
  /// Reads every row once, in place. Compare two stores' digests to prove a copy complete, or
  /// keep one to see later whether anything changed.
  ///
  /// - Throws: ``CofferError/Code/unknownEntity`` for a named entity the store does not hold,
  ///   or the backend's error.
  public func digest(entities names: [String]? = nil) async throws -> StoreDigest {
    let schemas = try await storedSchemas(named: names)
    return try await withRowReader { try await $0.digest(of: schemas) }
  }

  /// The stored schemas of the named entities (all of them when `names` is `nil`), sorted by
  /// name, each made readable on the backend: prepared with the schema it is stored in, which
  /// changes nothing stored.
  package func storedSchemas(named names: [String]?) async throws -> [EntitySchema] {
    let stored = try await storedSchemas()
    guard let names else {
      try await prepare(schemas: stored)
      return stored
    }
    let byName = Dictionary(stored.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    let chosen = try Set(names).sorted().map { name in
      guard let schema = byName[name] else {
        throw CofferError(
          .unknownEntity,
          "The store holds no entity of this name. Run `coffer inspect` on it to list the entities it holds.",
          store: backend.name, entity: name)
      }
      return schema
    }
    try await prepare(schemas: chosen)
    return chosen
  }
}

/// Sums the hashes of one entity's rows: see ``EntityDigest``.
package struct RowDigester {
  package let schema: EntitySchema
  /// Field positions in the order of their names' UTF-8 bytes, and each name's bytes.
  private let order: [(position: Int, name: [UInt8])]
  private var count = 0
  private var low: UInt64 = 0
  private var high: UInt64 = 0

  /// The key of every row hash: fixed, so digests compare across processes and releases.
  package static let key0: UInt64 = 0x436f_6666_6572_2044
  package static let key1: UInt64 = 0x6967_6573_7420_7631

  package init(schema: EntitySchema) {
    self.schema = schema
    order = schema.fields.enumerated()
      .map { (position: $0.offset, name: Array($0.element.name.utf8)) }
      .sorted { $0.name.lexicographicallyPrecedes($1.name) }
  }

  /// Adds one row read in place.
  package mutating func add(_ fields: any StoredFields) throws {
    if let row = fields.row { return add(row) }
    try add { try fields.value(at: $0) }
  }

  /// Adds one row.
  package mutating func add(_ row: Row) { add { row[$0] } }

  /// Adds every row `other` added (the digest is a sum, so rows can be digested in parts).
  package mutating func merge(_ other: RowDigester) {
    count += other.count
    low &+= other.low
    high &+= other.high
  }

  /// A digester of the same entity with only `rows` added, to ``merge(_:)`` later.
  package func part(_ rows: [Row]) -> RowDigester {
    var part = self
    (part.count, part.low, part.high) = (0, 0, 0)
    for row in rows { part.add(row) }
    return part
  }

  /// Adds the row whose value at each position `value` gives.
  private mutating func add(_ value: (Int) throws -> Value) rethrows {
    var hasher = SipHasher(key0: Self.key0, key1: Self.key1)
    for (position, name) in order {
      hasher.combine(UInt64(name.count))
      name.withUnsafeBytes { hasher.combine(bytes: $0) }
      Self.encode(try value(position), into: &hasher)
    }
    finish(hasher)
  }

  private mutating func finish(_ hasher: consuming SipHasher) {
    let (rowLow, rowHigh) = hasher.finalize128()
    low &+= rowLow
    high &+= rowHigh
    count += 1
  }

  /// The digest of the rows added so far.
  package var digest: EntityDigest {
    EntityDigest(entity: schema.name, schema: schema, count: count, rowsHash: Self.hex(high) + Self.hex(low))
  }

  /// A value's canonical encoding: a kind tag, then its payload.
  package static func encode(_ value: Value, into hasher: inout SipHasher) {
    switch value {
    case .null: hasher.combine(0 as UInt8)
    case .bool(let flag):
      hasher.combine(1 as UInt8)
      hasher.combine(flag ? 1 : 0 as UInt8)
    case .int(let int):
      hasher.combine(2 as UInt8)
      hasher.combine(UInt64(bitPattern: int))
    case .double(let double):
      hasher.combine(3 as UInt8)
      hasher.combine(double.bitPattern)
    case .string(let string):
      hasher.combine(4 as UInt8)
      var text = string
      text.withUTF8 { bytes in
        hasher.combine(UInt64(bytes.count))
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
      }
    case .bytes(let data):
      hasher.combine(5 as UInt8)
      combine(data, into: &hasher)
    case .date(let date):
      hasher.combine(6 as UInt8)
      hasher.combine(UInt64(bitPattern: Value.microseconds(since1970: date)))
    case .uuid(let uuid):
      hasher.combine(7 as UInt8)
      withUnsafeBytes(of: uuid.uuid) { hasher.combine(bytes: $0) }
    case .document(let data):
      hasher.combine(8 as UInt8)
      combine(data, into: &hasher)
    }
  }

  private static func combine(_ data: Data, into hasher: inout SipHasher) {
    hasher.combine(UInt64(data.count))
    data.withUnsafeBytes { hasher.combine(bytes: $0) }
  }

  private static func hex(_ word: UInt64) -> String {
    let digits = String(word, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }
}
