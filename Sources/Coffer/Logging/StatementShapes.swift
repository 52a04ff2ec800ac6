/// What the statement log and the statement tracer say of one statement's text, worked out once
/// per distinct text: a backend sends the same few statements over and over (its prepared
/// ones), and scanning each for literals and its table costs more than the span or the log line
/// it feeds.
package struct StatementShape: Sendable {
  /// The text with literals as `?` (``StatementLog/shape(of:)``): `db.query.text`.
  package let text: String
  /// `db.operation.name`: the first keyword (``StatementTracer/describe(_:)``).
  package let operation: String
  /// `db.collection.name`: the table it names, if it names one.
  package let collection: String?
  /// The span's name: `"<operation> <collection>"`, or the operation alone.
  package let spanName: String

  init(of sql: String) {
    let text = StatementLog.shape(of: sql)
    let (operation, collection) = StatementTracer.describe(text)
    self.text = text
    self.operation = operation
    self.collection = collection
    spanName = collection.map { "\(operation) \($0)" } ?? operation
  }
}

/// A bounded cache of ``StatementShape``s by statement text, one per statement log or tracer.
///
/// Statements whose text varies without bound (an `IN` list with one parameter per id) would
/// fill it: past ``limit`` texts it starts again empty, so it never holds more than that.
package final class StatementShapes: Sendable {
  /// How many texts are kept at most.
  package static let limit = 512
  private let known = LockedState<[String: StatementShape]>([:])

  package init() {}

  /// How many texts are kept now.
  package var count: Int { known.withLock { $0.count } }

  /// The shape of `sql`, from the cache or worked out now and kept.
  package func shape(of sql: String) -> StatementShape {
    if let shape = known.withLock({ $0[sql] }) { return shape }
    let shape = StatementShape(of: sql)
    known.withLock { known in
      if known.count >= Self.limit { known.removeAll(keepingCapacity: true) }
      known[sql] = shape
    }
    return shape
  }
}
