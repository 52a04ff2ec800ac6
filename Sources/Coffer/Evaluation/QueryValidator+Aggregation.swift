extension QueryValidator {
  /// The aggregation with its filter checked and normalized and its layout set, or an error
  /// naming what is wrong.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` as for a query, and for an unknown field, a
  ///   sum or average of a field that is not `int` or `double`, or a minimum, maximum, distinct
  ///   count or grouping on a document field (documents have no order).
  public static func validate(_ aggregation: Aggregation, schema: EntitySchema) throws -> Aggregation {
    var checked = aggregation
    var query = aggregation.query
    query.sort = []
    query.limit = nil
    query.offset = 0
    checked.query = try validate(query, schema: schema)
    if let name = aggregation.function.field {
      guard let field = schema.field(named: name) else { throw unknownField(name, schema) }
      switch aggregation.function {
      case .sum, .average:
        guard field.kind == .int || field.kind == .double else {
          throw invalid(
            "Cannot take the \(aggregation.function.name) of \(schema.name).\(field.name): it holds \(field.kind) "
              + "values, and only int and double fields add up.", schema, field.name)
        }
      case .min, .max, .countDistinct:
        guard field.kind.isOrdered else {
          throw invalid(
            "Cannot take the \(aggregation.function.name) of \(schema.name).\(field.name): documents have no order.",
            schema, field.name)
        }
      case .count: break
      }
    }
    if let name = aggregation.groupBy {
      guard let field = schema.field(named: name) else { throw unknownField(name, schema) }
      guard field.kind.isOrdered else {
        throw invalid(
          "Cannot group \(schema.name) by '\(field.name)': documents have no order.", schema, field.name)
      }
    }
    return checked
  }
}
