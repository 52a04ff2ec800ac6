import CoreMetrics

/// The gauges and timer of a backend's connection pool (PostgreSQL's), by OpenTelemetry's names:
/// `db.client.connection.count` by `db.client.connection.state` (`idle`, `used`),
/// `db.client.connection.max`, `db.client.connection.pending_requests` and
/// `db.client.connection.wait_time`, each with `db.system.name` and
/// `db.client.connection.pool.name` (the store's name, which never holds a password).
///
/// Made with the metrics factory in force when the pool is made; `nil` (``current(system:pool:maximum:)``)
/// when that is swift-metrics' no-op factory, so a pool with nothing bootstrapped records nothing.
package final class ConnectionPoolMetrics: Sendable {
  private let idle: Gauge
  private let used: Gauge
  private let pending: Gauge
  private let wait: CoreMetrics.Timer

  /// The pool's metrics, or `nil` when no metrics backend is bootstrapped or bound to the task.
  package static func current(system: String, pool: String, maximum: Int) -> ConnectionPoolMetrics? {
    let factory = MetricsSystem.factory
    if factory is NOOPMetricsHandler { return nil }
    return ConnectionPoolMetrics(factory: factory, system: system, pool: pool, maximum: maximum)
  }

  private init(factory: any MetricsFactory, system: String, pool: String, maximum: Int) {
    let names = [("db.system.name", system), ("db.client.connection.pool.name", pool)]
    idle = Gauge(
      label: "db.client.connection.count", dimensions: names + [("db.client.connection.state", "idle")],
      factory: factory)
    used = Gauge(
      label: "db.client.connection.count", dimensions: names + [("db.client.connection.state", "used")],
      factory: factory)
    pending = Gauge(label: "db.client.connection.pending_requests", dimensions: names, factory: factory)
    wait = CoreMetrics.Timer(
      label: "db.client.connection.wait_time", dimensions: names, preferredDisplayUnit: .seconds,
      factory: factory)
    Gauge(label: "db.client.connection.max", dimensions: names, factory: factory).record(maximum)
  }

  /// Records how many connections are open and idle, open and in use, and waited for.
  package func record(idle idleCount: Int, used usedCount: Int, pending pendingCount: Int) {
    idle.record(idleCount)
    used.record(usedCount)
    pending.record(pendingCount)
  }

  /// Records how long a caller waited for a connection, from `started` until now.
  package func recordWait(since started: ContinuousClock.Instant) {
    wait.recordNanoseconds((ContinuousClock.now - started).nanoseconds)
  }
}
