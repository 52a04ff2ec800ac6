import Tracing

/// Spans for the SQL statements a backend sends: one child span per statement under the span
/// of the store call that sent it, named and attributed by OpenTelemetry's database
/// conventions, with the statement's shape (``StatementLog/shape(of:)``: values are bound
/// parameters, and quoted literals become `?`) as `db.query.text`.
///
/// A backend makes one when a tracer is bootstrapped or bound as it opens
/// (``current(system:store:)`` is `nil` otherwise), and then asks nothing per statement but
/// whether it has one. A statement sent outside any store call (while opening) gets no span:
/// it has no call to belong to.
package struct StatementTracer: Sendable {
  let tracer: any Tracer
  /// `db.system.name`: `sqlite` or `postgresql`.
  let system: String
  /// `coffer.store`: the store's name, which never holds a password.
  let store: String
  /// The shapes of the statements traced so far.
  let shapes = StatementShapes()

  /// The statement tracer of a store, or `nil` when the tracer in force is the no-op one.
  package static func current(system: String, store: String) -> StatementTracer? {
    let tracer = InstrumentationSystem.tracer
    if tracer is NoOpTracer { return nil }
    return StatementTracer(tracer: tracer, system: system, store: store)
  }

  /// Records a statement that ended now after running for `nanoseconds`, as a child of
  /// `context` — the span of the call that sent it — or, when `nil`, of the task's current span.
  /// `failed` names the error's kind (`error.type`) for a statement that failed; `linked` are
  /// the spans of other calls the statement also served (the batches one commit made durable).
  package func record(
    _ sql: String, nanoseconds: Int64, context: InstrumentationContext? = nil,
    linked: [InstrumentationContext] = [], failed: String? = nil
  ) {
    guard let parent = context ?? InstrumentationContext.current else { return }
    let end = DefaultTracerClock.now
    let start = DefaultTracerClock.Timestamp(
      nanosecondsSinceEpoch: end.nanosecondsSinceEpoch
        - min(UInt64(max(0, nanoseconds)), end.nanosecondsSinceEpoch))
    let shape = shapes.shape(of: sql)
    let span = tracer.startSpan(shape.spanName, context: parent, ofKind: .client, at: start)
    if span.isRecording {
      span.updateAttributes { attributes in
        attributes["db.system.name"] = system
        attributes["db.operation.name"] = shape.operation
        if let collection = shape.collection { attributes["db.collection.name"] = collection }
        attributes["db.query.text"] = shape.text
        attributes["coffer.store"] = store
        if let failed { attributes["error.type"] = failed }
      }
      if let failed { span.setStatus(SpanStatus(code: .error, message: failed)) }
      for other in linked { span.addLink(SpanLink(context: other, attributes: [:])) }
    }
    span.end(at: end)
  }

  /// Runs `body`, which sends one statement, and records it (``record(_:nanoseconds:context:failed:)``)
  /// when it ends, with `error.type` when it throws.
  package func measure<R>(
    _ sql: String, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R
  ) async throws -> R {
    let started = ContinuousClock.now
    do {
      let result = try await body()
      record(sql, nanoseconds: (ContinuousClock.now - started).nanoseconds)
      return result
    } catch {
      record(
        sql, nanoseconds: (ContinuousClock.now - started).nanoseconds,
        failed: (error as? CofferError)?.code.name ?? String(describing: type(of: error)))
      throw error
    }
  }

  /// A statement shape's `db.operation.name` — its first keyword, upper-cased (`SELECT`,
  /// `INSERT`, `COMMIT`, …) — and `db.collection.name`: the table it names after `FROM`,
  /// `JOIN`, `INTO`, `UPDATE`, `TABLE` or `EXISTS`, the last part of a qualified name, when it
  /// names one.
  package static func describe(_ shape: String) -> (operation: String, collection: String?) {
    let scalars = Array(shape.unicodeScalars)
    var index = 0
    func skipSpaces() {
      while index < scalars.count, scalars[index] == " " || scalars[index] == "(" { index += 1 }
    }
    func word() -> String {
      var word = ""
      while index < scalars.count, scalars[index].properties.isAlphabetic || scalars[index] == "_" {
        word.unicodeScalars.append(scalars[index])
        index += 1
      }
      return word.uppercased()
    }
    func quoted() -> String? {
      guard index < scalars.count, scalars[index] == "\"" else { return nil }
      var name = ""
      index += 1
      while index < scalars.count {
        if scalars[index] == "\"" {
          if index + 1 < scalars.count, scalars[index + 1] == "\"" {
            name.unicodeScalars.append("\"")
            index += 2
            continue
          }
          index += 1
          return name
        }
        name.unicodeScalars.append(scalars[index])
        index += 1
      }
      return nil
    }
    skipSpaces()
    let operation = word()
    var previous = operation
    while index < scalars.count {
      skipSpaces()
      if ["FROM", "INTO", "UPDATE", "TABLE", "EXISTS", "JOIN"].contains(previous), var name = quoted() {
        while index + 1 < scalars.count, scalars[index] == ".", scalars[index + 1] == "\"" {
          index += 1
          guard let next = quoted() else { break }
          name = next
        }
        return (operation.isEmpty ? "OTHER" : operation, name)
      }
      let next = word()
      if next.isEmpty {
        if index < scalars.count, scalars[index] == "\"" {
          _ = quoted()
        } else if index < scalars.count {
          index += 1
        }
        previous = ""
      } else {
        previous = next
      }
    }
    return (operation.isEmpty ? "OTHER" : operation, nil)
  }
}
