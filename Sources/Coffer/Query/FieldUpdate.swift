/// A change to one field of every row an ``ChangeSet/Operation/updateMatching(entity:filter:changes:)``
/// selects: set it to a value, or add to it.
public struct FieldUpdate: Sendable, Hashable {
  /// What happens to the field.
  public enum Change: Sendable, Hashable {
    /// The field becomes this value (null only for an optional field).
    case set(Value)
    /// The field's number grows by this one (negative to subtract): an `int` field by an
    /// `.int`, a `double` field by a `.double`. A null field stays null.
    case add(Value)
  }

  /// The field's name.
  public var field: String
  /// What happens to it.
  public var change: Change

  /// A change to a field.
  public init(_ field: String, _ change: Change) {
    self.field = field
    self.change = change
  }

  /// Sets a field to a value.
  public static func set(_ field: String, to value: Value) -> FieldUpdate { FieldUpdate(field, .set(value)) }
  /// Adds to a number field.
  public static func add(_ field: String, _ amount: Value) -> FieldUpdate { FieldUpdate(field, .add(amount)) }
}

/// Field updates resolved against a schema, ready to apply to rows in its layout: the one
/// meaning of ``FieldUpdate`` that every backend shares.
@_spi(Backend) public struct CompiledFieldUpdates: Sendable {
  private let schema: EntitySchema
  private let steps: [(position: Int, change: FieldUpdate.Change)]

  /// Resolves updates against the schema rows are stored in.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for a field the schema does not have.
  public init(_ updates: [FieldUpdate], schema: EntitySchema) throws {
    self.schema = schema
    steps = try updates.map { update in
      guard let position = schema.position(of: update.field) else {
        throw QueryValidator.unknownField(update.field, schema)
      }
      return (position, update.change)
    }
  }

  /// The row with the updates applied.
  ///
  /// - Throws: ``CofferError/Code/valueOutOfRange`` when an integer sum overflows, naming the
  ///   entity, id and field; ``CofferError/Code/invalidValue`` when a double sum is not a number.
  public func apply(to row: Row, store: String?) throws -> Row {
    var row = row
    for (position, change) in steps {
      switch change {
      case .set(let value):
        row[position] = value
      case .add(let amount):
        switch (row[position], amount) {
        case (.int(let stored), .int(let delta)):
          let (sum, overflow) = stored.addingReportingOverflow(delta)
          if overflow {
            throw failure(.valueOutOfRange, "would leave the range of Int64", row, position, store)
          }
          row[position] = .int(sum)
        case (.double(let stored), .double(let delta)):
          let sum = stored + delta
          if sum.isNaN { throw failure(.invalidValue, "would not be a number (NaN)", row, position, store) }
          row[position] = .double(sum)
        default:
          continue  // A null field stays null.
        }
      }
    }
    return row
  }

  private func failure(
    _ code: CofferError.Code, _ what: String, _ row: Row, _ position: Int, _ store: String?
  )
    -> CofferError
  {
    let field = schema.fields[position].name
    return CofferError(
      code, "Adding to \(schema.name).\(field) \(what). Nothing in the batch was applied.", store: store,
      entity: schema.name, id: row[schema.idPosition], field: field)
  }
}
