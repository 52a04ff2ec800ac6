@_spi(Backend) import Coffer

/// What watches the statements a pool's connections send: the pool's statement log
/// (`logStatements=on`), its statement tracer (a tracer was in force as the store opened), or
/// both. The pool binds it to the task that uses a connection only when it has one, so that a
/// statement sent without either asks one task-local for `nil` and nothing more.
struct PostgresStatementWatch: Sendable {
  let log: StatementLog?
  let tracer: StatementTracer?

  /// The watch of the statements the current task sends; `nil` when they are neither logged nor
  /// traced.
  @TaskLocal static var current: PostgresStatementWatch?

  /// A watch with a log or a tracer, or `nil` when there is neither.
  static func make(log: StatementLog?, tracer: StatementTracer?) -> PostgresStatementWatch? {
    log == nil && tracer == nil ? nil : PostgresStatementWatch(log: log, tracer: tracer)
  }
}
