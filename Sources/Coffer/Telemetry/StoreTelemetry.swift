import CoreMetrics
import Tracing

/// What a ``Store`` counts (swift-metrics) and traces (swift-distributed-tracing): one place,
/// above every backend, so each backend is measured the same way once.
///
/// A store takes the metrics factory and the tracer in force when it is made — bootstrapped
/// (`MetricsSystem.bootstrap`, `InstrumentationSystem.bootstrap`) or bound to the task
/// (`withMetricsFactory`, `withTracer`). When both are the no-op ones a store has no telemetry
/// at all (``Store/telemetry`` is `nil`), and its calls cost one test of `nil` more than
/// without instrumentation.
///
/// Labels, dimensions and span attributes hold names only — the store's, an entity's, an
/// operation's, an error code — never a stored value (the `errors.no-value-in-telemetry`
/// conformance check searches them). The names follow OpenTelemetry's database conventions;
/// the DocC article "Observability" lists each metric and span.
@usableFromInline
package final class StoreTelemetry: Sendable {
  /// Where metrics are made; `nil` when it is swift-metrics' no-op factory.
  let metrics: (any MetricsFactory)?
  /// Where spans start; `nil` when it is the no-op tracer.
  let tracer: (any Tracer)?
  /// `db.system.name`: the engine (`sqlite`, `postgresql`, `lmdb`, `plist`, `memory`, …).
  package let system: String
  /// `coffer.store`: the store's name, which never holds a password.
  let store: String
  /// The timers and counters made so far, by what they measure: a metric is made once and
  /// reused, as swift-metrics expects.
  private let made = LockedState(Instruments())

  struct Instruments {
    var counters: [InstrumentKey: Counter] = [:]
    /// What every call of one operation on one entity uses, found with one lookup a call.
    var calls: [CallKey: Call] = [:]
  }

  /// An operation on an entity (or on none).
  struct CallKey: Hashable {
    var operation: StoreOperation
    var entity: String?
  }

  /// What a call of one operation on one entity records: its span's name and its timer.
  struct Call {
    var spanName: String
    var timer: CoreMetrics.Timer?
  }

  /// A metric's label and the name parts of its dimensions.
  struct InstrumentKey: Hashable {
    var label: String
    var operation: StoreOperation?
    var entity: String?
    var detail: String?
  }

  /// The telemetry of a store named `name`, or `nil` when nothing is bootstrapped or bound.
  package static func current(store name: String) -> StoreTelemetry? {
    let factory = MetricsSystem.factory
    let tracer = InstrumentationSystem.tracer
    let metrics: (any MetricsFactory)? = factory is NOOPMetricsHandler ? nil : factory
    let tracing: (any Tracer)? = tracer is NoOpTracer ? nil : tracer
    if metrics == nil && tracing == nil { return nil }
    return StoreTelemetry(store: name, metrics: metrics, tracer: tracing)
  }

  init(store: String, metrics: (any MetricsFactory)?, tracer: (any Tracer)?) {
    self.store = store
    self.metrics = metrics
    self.tracer = tracer
    self.system = Self.system(ofStore: store)
  }

  /// `db.system.name` for a store's name: its URL scheme, `postgresql` for `postgres`, as
  /// OpenTelemetry names it.
  package static func system(ofStore name: String) -> String {
    let scheme = name.prefix { $0 != ":" }.lowercased()
    switch scheme {
    case "postgres", "postgresql": return "postgresql"
    case "": return "other"
    default: return scheme
    }
  }

  // MARK: Measuring a call

  /// Runs one store call as a span named `"<operation> <entity>"` and times it in
  /// `db.client.operation.duration`; a ``CofferError`` is counted in
  /// `coffer.operation.failures` with its code as `error.type`.
  @usableFromInline
  package func observe<R>(_ operation: StoreOperation, entity: String?, _ body: () async throws -> R)
    async throws -> R
  {
    try await run(operation, entity: entity, batchSize: nil, body) { _, _ in }
  }

  /// Runs one batch as ``observe(_:entity:_:)`` does, then adds its rows to
  /// `coffer.batch.rows` (by change: inserted, updated, deleted) and to the span.
  package func observeBatch(
    entity: String?, operations: Int, _ body: () async throws -> ChangeSummary
  ) async throws -> ChangeSummary {
    try await run(.apply, entity: entity, batchSize: operations, body) { summary, span in
      if let span, span.isRecording {
        span.updateAttributes { attributes in
          attributes["coffer.rows.inserted"] = summary.inserted
          attributes["coffer.rows.updated"] = summary.updated
          attributes["coffer.rows.deleted"] = summary.deleted
        }
      }
      guard metrics != nil else { return }
      for (change, rows) in [
        ("inserted", summary.inserted), ("updated", summary.updated), ("deleted", summary.deleted),
      ] where rows > 0 {
        counter("coffer.batch.rows", .apply, entity: entity, detail: change)?.increment(by: Int64(rows))
      }
    }
  }

  private func run<R>(
    _ operation: StoreOperation, entity: String?, batchSize: Int?, _ body: () async throws -> R,
    isolation: isolated (any Actor)? = #isolation, succeeded: (R, (any Span)?) -> Void
  ) async throws -> R {
    let started = ContinuousClock.now
    let call = self.call(operation, entity: entity)
    let span = tracer.map { startSpan($0, call.spanName, operation, entity: entity, batchSize: batchSize) }
    do {
      let result: R
      if let span {
        // The closure captures the caller's isolation, so it runs where the caller runs: the
        // task-local's `operation` is a plain async function type, and a closure of that type
        // not isolated to anything would leave a main-actor caller's thread and come back.
        result = try await InstrumentationContext.$current.withValue(
          span.context,
          operation: {
            _ = isolation
            return try await body()
          }, isolation: isolation)
      } else {
        result = try await body()
      }
      succeeded(result, span)
      finish(operation, entity: entity, call: call, started: started, span: span, error: nil)
      return result
    } catch {
      finish(operation, entity: entity, call: call, started: started, span: span, error: error)
      throw error
    }
  }

  private func startSpan(
    _ tracer: any Tracer, _ name: String, _ operation: StoreOperation, entity: String?, batchSize: Int?
  ) -> any Span {
    let span = tracer.startSpan(name, context: InstrumentationContext.current ?? .topLevel, ofKind: .client)
    if span.isRecording {
      span.updateAttributes { attributes in
        attributes["db.system.name"] = system
        attributes["db.operation.name"] = operation.name
        if let entity { attributes["db.collection.name"] = entity }
        if let batchSize { attributes["db.operation.batch.size"] = batchSize }
        attributes["coffer.store"] = store
      }
    }
    return span
  }

  private func finish(
    _ operation: StoreOperation, entity: String?, call: Call, started: ContinuousClock.Instant,
    span: (any Span)?, error: (any Error)?
  ) {
    let code = error.map { ($0 as? CofferError)?.code.name ?? "other" }
    if let span {
      if let code {
        span.attributes["error.type"] = code
        span.setStatus(SpanStatus(code: .error, message: code))
      }
      span.end()
    }
    guard metrics != nil else { return }
    call.timer?.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
    if let code { counter("coffer.operation.failures", operation, entity: entity, detail: code)?.increment() }
  }

  // MARK: Counting

  /// Counts one more run of a transaction's body, or of a batch's reference expansion, after a
  /// conflict: `coffer.transaction.retries`.
  package func countRetry(entity: String?) {
    counter("coffer.transaction.retries", .transaction, entity: entity)?.increment()
  }

  /// Counts migration steps by outcome (`applied`, `alreadyApplied`, `failed`, `notRun`):
  /// `coffer.migration.steps`.
  package func countMigrationSteps(_ report: MigrationReport) {
    for step in report.steps {
      let outcome: String
      switch step.outcome {
      case .alreadyApplied: outcome = "alreadyApplied"
      case .applied: outcome = "applied"
      case .failed: outcome = "failed"
      case .notRun: outcome = "notRun"
      }
      counter("coffer.migration.steps", .migrate, entity: nil, detail: outcome)?.increment()
    }
  }

  /// Counts rows a copy or an import wrote into an entity: `coffer.copy.rows`.
  package func countCopied(_ rows: Int, entity: String) {
    counter("coffer.copy.rows", .copy, entity: entity)?.increment(by: Int64(rows))
  }

  // MARK: Making metrics once

  /// The span name and timer of calls of `operation` on `entity`, made at the first such call.
  private func call(_ operation: StoreOperation, entity: String?) -> Call {
    let key = CallKey(operation: operation, entity: entity)
    return made.withLock { made in
      if let call = made.calls[key] { return call }
      let label = "db.client.operation.duration"
      let call = Call(
        spanName: entity.map { "\(operation.name) \($0)" } ?? operation.name,
        timer: metrics.map { metrics in
          CoreMetrics.Timer(
            label: label,
            dimensions: dimensions(InstrumentKey(label: label, operation: operation, entity: entity)),
            preferredDisplayUnit: .seconds, factory: metrics)
        })
      made.calls[key] = call
      return call
    }
  }

  private func counter(_ label: String, _ operation: StoreOperation, entity: String?, detail: String? = nil)
    -> Counter?
  {
    guard let metrics else { return nil }
    let key = InstrumentKey(label: label, operation: operation, entity: entity, detail: detail)
    return made.withLock { made in
      if let counter = made.counters[key] { return counter }
      let counter = Counter(label: label, dimensions: dimensions(key), factory: metrics)
      made.counters[key] = counter
      return counter
    }
  }

  /// The dimensions of a metric: names only.
  private func dimensions(_ key: InstrumentKey) -> [(String, String)] {
    var dimensions = [("db.system.name", system), ("coffer.store", store)]
    if let operation = key.operation { dimensions.append(("db.operation.name", operation.name)) }
    if let entity = key.entity { dimensions.append(("db.collection.name", entity)) }
    if let detail = key.detail {
      switch key.label {
      case "coffer.operation.failures": dimensions.append(("error.type", detail))
      case "coffer.batch.rows": dimensions.append(("coffer.change", detail))
      case "coffer.migration.steps": dimensions.append(("coffer.outcome", detail))
      default: dimensions.append(("coffer.detail", detail))
      }
    }
    return dimensions
  }
}

/// The calls a store measures, by their `db.operation.name`.
@usableFromInline
package enum StoreOperation: UInt8, Sendable, Hashable {
  /// Reading values by id.
  case get
  /// Reading the values a query selects.
  case fetch
  /// Counting what a query selects.
  case count
  /// Whether a query selects anything.
  case exists
  /// An aggregate (sum, average, …) over what a query selects.
  case aggregate
  /// Applying a batch of changes.
  case apply
  /// Preparing entities (creating or evolving their storage).
  case prepare
  /// Running a migration plan.
  case migrate
  /// A transaction's run (its retries).
  case transaction
  /// Copying or importing rows.
  case copy

  /// `db.operation.name`.
  package var name: String {
    switch self {
    case .get: "get"
    case .fetch: "fetch"
    case .count: "count"
    case .exists: "exists"
    case .aggregate: "aggregate"
    case .apply: "apply"
    case .prepare: "prepare"
    case .migrate: "migrate"
    case .transaction: "transaction"
    case .copy: "copy"
    }
  }
}

extension StoreTelemetry {
  /// The one entity a batch's operations change, for `db.collection.name`; `nil` when they
  /// change several.
  package static func entity(of operations: [ChangeSet.Operation]) -> String? {
    guard let first = operations.first?.entity else { return nil }
    return operations.allSatisfy { $0.entity == first } ? first : nil
  }
}
