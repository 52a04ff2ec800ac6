@_spi(Backend) import Coffer
import Logging
import NIOCore
import PostgresNIO

extension PostgresConnection {
  /// Sends `query`, unless the connection has closed: then it throws
  /// `ChannelError.ioOnClosedChannel` (a lost connection) at once.
  ///
  /// postgres-nio 1.33 never completes a statement written to a connection whose channel has
  /// closed: the write fails at the channel, and the statement's promise is dropped, so its
  /// caller would wait forever. Every statement Coffer sends goes through one of the `send`
  /// methods. Each call runs on its connection's event loop
  /// (``PostgresConnectionPool/withConnection(while:_:)``), where the channel closes too, so
  /// nothing can close it between this check and the write.
  @discardableResult
  func send(_ query: PostgresQuery, logger: Logger = .disabled) async throws -> PostgresRowSequence {
    guard !isClosed else { throw ChannelError.ioOnClosedChannel }
    return try await watched(query.sql) { try await self.query(query, logger: logger) }
  }

  /// Executes a prepared statement, unless the connection has closed (see ``send(_:logger:)``).
  func send<Statement: PostgresPreparedStatement>(_ statement: Statement, logger: Logger) async throws
    -> AsyncThrowingMapSequence<PostgresRowSequence, Statement.Row>
  {
    guard !isClosed else { throw ChannelError.ioOnClosedChannel }
    return try await watched(Statement.sql) { try await execute(statement, logger: logger) }
  }

  /// Sends `query`, which returns no rows, and returns how many rows it wrote, unless the
  /// connection has closed (see ``send(_:logger:)``).
  func sendCountingRows(_ query: PostgresQuery, logger: Logger = .disabled) async throws -> Int {
    guard !isClosed else { throw ChannelError.ioOnClosedChannel }
    return try await watched(query.sql) {
      try await self.query(query, logger: logger) { _ in }.get().rows ?? 0
    }
  }

  /// Runs `body`, which sends the statement `sql`, logging it and making a span of it as the
  /// pool's ``PostgresStatementWatch`` says; only runs `body` when the pool bound none.
  private func watched<R>(_ sql: String, _ body: () async throws -> R) async throws -> R {
    guard let watch = PostgresStatementWatch.current else { return try await body() }
    let started = ContinuousClock.now
    defer { watch.log?.record(sql, since: started) }
    guard let tracer = watch.tracer else { return try await body() }
    return try await tracer.measure(sql, body)
  }
}
