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
public struct RowReshaper: Sendable {
  /// `nil` when rows already have the current shape.
  private let evolution: SchemaEvolution?

  /// A reshaper from the schema rows were made for (`nil`: the current one) to the schema the
  /// entity is stored with now.
  ///
  /// - Throws: ``CofferError/Code/schemaMismatch`` naming entity and field when rows made for
  ///   `layout` cannot be stored under `current` (a field changed kind, or `current` requires a
  ///   field the rows lack and has no default for it). Nothing should be applied then.
  public init(_ layout: EntitySchema?, storedAs current: EntitySchema, store: String?) throws {
    guard let layout, layout.fields != current.fields else {
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
