import Foundation

/// Puts rows made for one schema into the shape an entity is stored with now.
///
/// A batch is encoded against the schema its writer knew (``ChangeSet/layouts``); by the time
/// a backend applies it under its write lock, another task may have prepared the entity with
/// a different schema. A backend makes one reshaper per entity inside its write transaction
/// and passes every row of that entity through it, so a row is always written in the layout
/// that is current when it is written. The rules are those of ``SchemaEvolution``: a field the
/// row lacks takes its default (or null when optional), a field the entity no longer declares
/// is dropped, and a kind change is a ``CofferError/Code/schemaMismatch``.
///
/// ```swift
/// let reshape = try RowReshaper(changes.layouts[entity], storedAs: current, store: name)
/// let row = reshape(incoming)
/// ```
@_spi(Backend) public struct RowReshaper: Sendable {
  /// `nil` when rows already have the current shape.
  private let evolution: SchemaEvolution?

  /// A reshaper from the schema rows were made for (`nil`: the current one) to the schema the
  /// entity is stored with now.
  ///
  /// - Throws: ``CofferError/Code/schemaMismatch`` naming entity and field when rows made for
  ///   `layout` cannot be stored under `current` (a field changed kind, or `current` requires a
  ///   field the rows lack and has no default for it). Nothing should be applied then.
  public init(_ layout: EntitySchema?, storedAs current: EntitySchema, store: String?) throws {
    guard let layout, !layout.isIdentical(to: current), layout.fields != current.fields else {
      evolution = nil
      return
    }
    do {
      evolution = try SchemaEvolution(from: layout, to: current, store: store)
    } catch let error as CofferError {
      throw CofferError(
        .schemaMismatch,
        "A batch's \(current.name) rows were made for a schema that was replaced while the batch waited to "
          + "be applied, and they cannot be stored under the new one: \(error.message) Nothing in the batch "
          + "was applied; encode the values again with the current type.",
        store: store, entity: current.name, field: error.field)
    }
  }

  /// A reshaper for reads: from the schema an entity is stored with now to the one a reader
  /// decodes with (``Query/layout``; `nil`: the current one).
  ///
  /// - Throws: ``CofferError/Code/schemaMismatch`` when stored rows cannot be read in `wanted`'s
  ///   shape (a field changed kind, or `wanted` requires a field with no default that the
  ///   entity no longer has).
  public init(reading current: EntitySchema, as wanted: EntitySchema?, store: String?) throws {
    guard let wanted, !wanted.isIdentical(to: current), wanted.fields != current.fields else {
      evolution = nil
      return
    }
    do {
      evolution = try SchemaEvolution(from: current, to: wanted, store: store)
    } catch let error as CofferError {
      throw CofferError(
        .schemaMismatch,
        "\(current.name) was prepared with another schema while it was read, and its rows cannot be read as the "
          + "reader's schema: \(error.message)",
        store: store, entity: current.name, field: error.field)
    }
  }

  /// A view that shows a backend's fields of one row after another in the reshaped layout,
  /// or `nil` when rows pass through unchanged. Make one per read and pass each row's fields
  /// through ``ReshapedFields/showing(_:)``.
  public func makeView() -> ReshapedFields? { evolution.map(ReshapedFields.init) }

  /// A reshaper that passes rows through unchanged.
  public static let identity = RowReshaper()

  private init() { evolution = nil }

  /// Whether rows pass through unchanged.
  public var isIdentity: Bool { evolution == nil }

  /// The row in the current shape.
  @inlinable
  public func callAsFunction(_ row: Row) -> Row { reshape(row) }

  /// The row in the current shape.
  @usableFromInline
  func reshape(_ row: Row) -> Row {
    guard let evolution else { return row }
    return evolution.migrate(row)
  }
}

/// Stored fields in another layout than the one they are stored in: what
/// ``RowReshaper/makeView()`` makes for a read whose reader asked for another schema.
///
/// A field the stored row lacks reads as its default (or null); a stored null of a field the
/// reader requires reads as its default. Valid, like the fields it shows, only during the
/// visit it is handed to.
@_spi(Backend) public final class ReshapedFields: StoredFields {
  private let sources: [Int?]
  /// What each position reads as when it has no stored value (no source, or a stored null).
  private let fills: [Value]
  private var inner: (any StoredFields)?

  init(_ evolution: SchemaEvolution) {
    sources = evolution.sources
    fills = evolution.declared.fields.map { $0.isOptional ? .null : ($0.defaultValue ?? .null) }
  }

  /// Shows `fields` through this view.
  public func showing(_ fields: any StoredFields) -> any StoredFields {
    inner = fields
    return self
  }

  /// The number of fields of the reader's layout.
  public var count: Int { sources.count }

  /// The stored position of a field and the fields it is read from, or `nil` when it reads as
  /// its fill value.
  private func stored(_ position: Int) -> (fields: any StoredFields, position: Int)? {
    guard let source = sources[position], let inner, !inner.isNull(at: source) else { return nil }
    return (inner, source)
  }

  /// The value at a position of the reader's layout.
  public func value(at position: Int) throws -> Value {
    guard let (fields, source) = stored(position) else { return fills[position] }
    return try fields.value(at: source)
  }

  /// Whether the field reads as null.
  public func isNull(at position: Int) -> Bool { stored(position) == nil && fills[position].isNull }

  /// The integer at a position.
  public func int(at position: Int) -> Int64? {
    guard let (fields, source) = stored(position) else {
      guard case .int(let number) = fills[position] else { return nil }
      return number
    }
    return fields.int(at: source)
  }

  /// The double at a position.
  public func double(at position: Int) -> Double? {
    guard let (fields, source) = stored(position) else {
      guard case .double(let number) = fills[position] else { return nil }
      return number
    }
    return fields.double(at: source)
  }

  /// The Boolean at a position.
  public func bool(at position: Int) -> Bool? {
    guard let (fields, source) = stored(position) else {
      guard case .bool(let flag) = fills[position] else { return nil }
      return flag
    }
    return fields.bool(at: source)
  }

  /// The string at a position.
  public func string(at position: Int) -> String? {
    guard let (fields, source) = stored(position) else {
      guard case .string(let text) = fills[position] else { return nil }
      return text
    }
    return fields.string(at: source)
  }

  /// The date at a position.
  public func date(at position: Int) -> Date? {
    guard let (fields, source) = stored(position) else {
      guard case .date(let date) = fills[position] else { return nil }
      return date
    }
    return fields.date(at: source)
  }

  /// The UUID at a position.
  public func uuid(at position: Int) -> UUID? {
    guard let (fields, source) = stored(position) else {
      guard case .uuid(let uuid) = fills[position] else { return nil }
      return uuid
    }
    return fields.uuid(at: source)
  }
}
