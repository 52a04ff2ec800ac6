import CSQLite
@_spi(Backend) import Coffer
import Tracing

/// What watches a connection's statements, handed to SQLite's trace hook: the statement log,
/// the statement tracer, or both.
final class SQLiteStatementHook: Sendable {
  let log: StatementLog?
  let tracer: StatementTracer?
  /// The span a statement on the writer's thread belongs to, which has no task to ask: the
  /// batch being applied (set by ``SQLiteBackend/applyTogether(_:)``), and the other batches a
  /// commit serves, linked to its span. `nil` on a reader, whose statements run in the task of
  /// the call that sent them.
  let writerSpans = LockedState<(parent: InstrumentationContext?, linked: [InstrumentationContext])>(
    (nil, []))
  /// Whether this is the writer's hook: a reader's never has ``writerSpans`` set, and does not
  /// take its lock.
  let onWriter: Bool

  init(log: StatementLog?, tracer: StatementTracer?, onWriter: Bool) {
    self.log = log
    self.tracer = tracer
    self.onWriter = onWriter
  }

  /// Hands one finished statement to the log and the tracer.
  func record(_ sql: String, nanoseconds: Int64) {
    log?.record(sql, nanoseconds: nanoseconds)
    guard let tracer else { return }
    guard onWriter else { return tracer.record(sql, nanoseconds: nanoseconds) }
    let (parent, linked) = writerSpans.withLock { ($0.parent, $0.linked) }
    tracer.record(sql, nanoseconds: nanoseconds, context: parent, linked: linked)
  }
}

extension SQLiteConnection {
  /// Logs or traces (or both) every statement this connection runs, with how long SQLite spent
  /// on it, from SQLite's own profiling hook (`sqlite3_trace_v2`, `SQLITE_TRACE_PROFILE`): the
  /// statement's text as compiled, whose values are bound parameters, never expanded. Does
  /// nothing when neither is given, so a connection neither logged nor traced has no hook.
  /// `onWriter` says whether this is the writer, whose statements run on a thread with no task
  /// and take their span from ``tracingStatements(under:linking:_:)``.
  func watchStatements(log: StatementLog?, tracer: StatementTracer?, onWriter: Bool) {
    guard log != nil || tracer != nil else { return }
    let box = SQLiteStatementHook(log: log, tracer: tracer, onWriter: onWriter)
    statementHook = box
    sqlite3_trace_v2(
      handle, UInt32(SQLITE_TRACE_PROFILE),
      { _, context, statement, elapsed in
        guard let context, let statement, let elapsed else { return 0 }
        let box = Unmanaged<SQLiteStatementHook>.fromOpaque(context).takeUnretainedValue()
        guard let text = sqlite3_sql(OpaquePointer(statement)) else { return 0 }
        box.record(String(cString: text), nanoseconds: elapsed.load(as: Int64.self))
        return 0
      }, Unmanaged.passUnretained(box).toOpaque())
  }

  /// Runs `body` with the writer's statements belonging to the span of `parent` (the batch being
  /// applied), then to the span they belonged to before; does nothing more than call `body` when
  /// statements are not traced.
  func tracingStatements<R>(
    under parent: InstrumentationContext?, linking linked: [InstrumentationContext] = [],
    _ body: () throws -> R
  ) rethrows -> R {
    guard let hook = statementHook, hook.tracer != nil else { return try body() }
    let before = hook.writerSpans.withLock { spans in
      defer { spans = (parent, linked) }
      return spans
    }
    defer { hook.writerSpans.withLock { $0 = before } }
    return try body()
  }
}
