@_spi(Backend) import Coffer
import CoreMetrics
import Foundation
import InMemoryTracing
import MetricsTestKit
import Tracing

/// Text that stands for a stored secret: it must never be recorded as a metric or a span.
private let recorded = "T3L3M-9b2e"

extension ConformanceSuite {
  static let telemetryChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "telemetry.no-value-in-metrics-or-spans",
      "A store made under a recording metrics factory and tracer times each call by operation and entity "
        + "(db.client.operation.duration), counts rows written and failures by code, and traces each call as "
        + "a span named by OpenTelemetry's database conventions; a SQL backend (SQLite, PostgreSQL) adds a "
        + "child span per statement with its shape as db.query.text, the commit among them — and records no "
        + "stored value: writes, a failed write and reads with values holding a marker leave it in no label, "
        + "dimension, span name, attribute, event or status, statement spans included."
    ) { context in
      let metrics = TestMetrics()
      let tracer = InMemoryTracer()
      try await withMetricsFactory(metrics) {
        try await withTracer(tracer) {
          let store = try await context.store()
          try await store.insert([Account(id: 1, email: recorded + "@a", name: recorded + " A")])
          try await store.update(Account(id: 1, email: recorded + "@b", name: recorded + " B"))
          try await store.upsert(Account(id: 2, email: recorded + "@c", name: recorded))
          do {
            try await store.insert(Account(id: 3, email: recorded + "@c", name: recorded))
          } catch let error as CofferError where error.code == .uniqueViolation {
            // Expected: counted by its code.
          }
          _ = try await store.query(Account.self).filter(FieldRef("email") == recorded + "@b").fetch()
          _ = try await store.query(Account.self).filter(FieldRef("name").hasPrefix(recorded)).count()
          _ = try await store.get(Account.self, id: 1)
          try await store.delete(Account.self, id: 2)
        }
      }
      let spans = tracer.finishedSpans
      let timers = metrics.timers(label: "db.client.operation.duration")
      for (operation, expected) in [("get", 1), ("fetch", 1), ("count", 1), ("apply", 5)] {
        let named = spans.filter { $0.operationName == "\(operation) Account" }
        try expect(
          named.count >= expected, "\(named.count) '\(operation) Account' spans, expected \(expected)")
        for span in named {
          try expect(span.kind == .client, "the '\(span.operationName)' span is not of kind client")
          try expect(
            span.attributes.get("db.operation.name") == .string(operation)
              && span.attributes.get("db.collection.name") == .string("Account")
              && span.attributes.get("db.system.name") != nil,
            "the '\(span.operationName)' span lacks its db.* attributes")
        }
        try expect(
          timers.contains { timer in
            timer.dimensions.contains { $0 == ("db.operation.name", operation) }
              && timer.dimensions.contains { $0 == ("db.collection.name", "Account") }
              && !timer.values.isEmpty
          }, "no db.client.operation.duration was recorded for \(operation) on Account")
      }
      try expect(
        spans.contains { $0.attributes.get("error.type") == .string("uniqueViolation") },
        "the refused insert's span has no error.type")
      try expect(
        metrics.counters(label: "coffer.operation.failures").contains { counter in
          counter.dimensions.contains { $0 == ("error.type", "uniqueViolation") } && counter.totalValue == 1
        }, "the refused insert was not counted in coffer.operation.failures by its code")
      try expectStatementSpans(spans)
      let inserted = metrics.counters(label: "coffer.batch.rows").filter { counter in
        counter.dimensions.contains { $0 == ("coffer.change", "inserted") }
      }
      try expect(
        inserted.map(\.totalValue).reduce(0, +) == 2,
        "coffer.batch.rows counted inserts other than the two made")

      var texts: [String] = []
      for span in spans {
        texts.append(span.operationName)
        span.attributes.forEach { key, value in texts.append("\(key)=\(value)") }
        for event in span.events {
          texts.append(event.name)
          event.attributes.forEach { key, value in texts.append("\(key)=\(value)") }
        }
        if let status = span.status { texts.append(status.message ?? "") }
        for error in span.errors { texts.append(String(describing: error.error)) }
      }
      let labelled: [(String, [(String, String)])] =
        metrics.counters.map { ($0.label, $0.dimensions) } + metrics.timers.map { ($0.label, $0.dimensions) }
        + metrics.recorders.map { ($0.label, $0.dimensions) }
        + metrics.meters.map { ($0.label, $0.dimensions) }
      for (label, dimensions) in labelled {
        texts.append(label)
        for (key, value) in dimensions { texts.append("\(key)=\(value)") }
      }
      for text in texts {
        try expect(!text.contains(recorded), "a metric or span records a stored value: \(text)")
      }
    }
  ]
}

/// On a SQL backend, checks that the statements are spans under the store calls' spans: a
/// `SELECT` under the fetch, an `INSERT` and the `COMMIT` under a batch, each with the
/// OpenTelemetry database attributes. A backend without SQL statements has none to check.
private func expectStatementSpans(_ spans: [FinishedInMemorySpan]) throws {
  let calls = spans.filter { $0.attributes.get("db.query.text") == nil }
  let statements = spans.filter { $0.attributes.get("db.query.text") != nil }
  let systems = Set(
    calls.compactMap { span -> String? in
      guard case .string(let system) = span.attributes.get("db.system.name") else { return nil }
      return system
    })
  guard !systems.isDisjoint(with: ["sqlite", "postgresql"]) else {
    try expect(statements.isEmpty, "a backend without SQL made statement spans")
    return
  }
  let callsByID = Dictionary(calls.map { ($0.spanID, $0) }, uniquingKeysWith: { first, _ in first })
  func under(_ call: String, _ operation: String) -> Bool {
    statements.contains { statement in
      statement.attributes.get("db.operation.name") == .string(operation)
        && statement.parentSpanID.flatMap { callsByID[$0] }?.operationName == call
    }
  }
  try expect(under("fetch Account", "SELECT"), "no SELECT span under the 'fetch Account' span")
  try expect(under("apply Account", "INSERT"), "no INSERT span under an 'apply Account' span")
  try expect(under("apply Account", "COMMIT"), "no COMMIT span under an 'apply Account' span")
  for statement in statements {
    try expect(
      statement.kind == .client, "the statement span '\(statement.operationName)' is not of kind client")
    try expect(
      statement.attributes.get("db.system.name") != nil
        && statement.attributes.get("db.operation.name") != nil,
      "the statement span '\(statement.operationName)' lacks db.system.name or db.operation.name")
    try expect(
      statement.parentSpanID.map { callsByID[$0] != nil } ?? false,
      "the statement span '\(statement.operationName)' is not under a store call's span")
  }
}
