@_spi(Backend) import Coffer
import Foundation

/// One backend in a differential run: its store and a reference that follows it step by step.
struct DifferentialLane {
  let context: CheckContext
  var store: Store
  var reference = DifferentialReference()
  /// The steps this lane ran.
  var steps = 0
  /// Whether the store records a change feed (see ``DifferentialRunner/evolvesSchemas(_:)``).
  var recordsChanges = false

  var target: ConformanceTarget { context.target }
}

/// Where a backend first disagreed with the reference in a sequence.
struct DifferentialDisagreement: Sendable {
  /// The position of the step in the sequence.
  let index: Int
  /// What the backend gave and what the reference gave.
  let message: String
  /// A short name for the kind of disagreement, e.g. `fetch: rows ≠ rows`.
  let kind: String
}

/// Replays steps on fresh stores of one or more targets, each beside a reference of its own,
/// and compares every outcome bit for bit.
enum DifferentialRunner {
  /// Whether to write each step to standard error before running it
  /// (`COFFER_DIFFERENTIAL_TRACE`), to find the step that crashes a process.
  static let tracing = ProcessInfo.processInfo.environment["COFFER_DIFFERENTIAL_TRACE"] != nil

  /// Runs the steps on a fresh store of each context's target. Returns, for each, where it
  /// first disagreed with its reference (nil when it never did) and how many steps it ran.
  /// A backend that disagrees stops there; the others go on.
  static func run(_ steps: [DifferentialStep], contexts: [CheckContext]) async throws
    -> [(disagreement: DifferentialDisagreement?, steps: Int)]
  {
    var lanes: [DifferentialLane] = []
    for context in contexts {
      let store = try await context.store()
      var lane = DifferentialLane(context: context, store: store)
      // A backend with a change feed records every step, for the replay the tools check makes —
      // in a sequence whose schemas never change: the feed holds rows, not schema changes, so
      // rows replayed into the final schema may clash where the source's never did (two rows
      // given a new unique field's default before one of them was deleted).
      if context.target.capabilities.contains(.changeFeed), !evolvesSchemas(steps) {
        try await store.recordChanges()
        lane.recordsChanges = true
      }
      lanes.append(lane)
    }
    var results: [DifferentialDisagreement?] = Array(repeating: nil, count: lanes.count)
    for (index, step) in steps.enumerated() {
      var outcomes: [(Int, DifferentialOutcome)] = []
      var failed: [(Int, String, String)] = []
      for lane in lanes.indices where results[lane] == nil {
        let before = lanes[lane].reference.prepared
        if tracing {
          FileHandle.standardError.write(
            Data(
              "step \(index + 1) on \(lanes[lane].target.name): \(DifferentialRendering.step(step, before))\n"
                .utf8))
        }
        let outcome = await perform(step, on: &lanes[lane])
        lanes[lane].steps += 1
        outcomes.append((lane, outcome))
        if let message = compare(step, outcome, &lanes[lane].reference) {
          let schema = schemaShown(step, before)
          failed.append((lane, message, kind(step, outcome, schema)))
        }
      }
      for (lane, message, kind) in failed {
        let mine = outcomes.first { $0.0 == lane }?.1
        let alike = outcomes.filter { $0.0 != lane && mine.map($0.1.same) == true }.map {
          lanes[$0.0].target.name
        }
        let others = outcomes.filter { $0.0 != lane && mine.map($0.1.same) != true }.map {
          lanes[$0.0].target.name
        }
        var text = message
        if contexts.count > 1 {
          text +=
            "\nOther backends: \(alike.isEmpty ? "none" : alike.joined(separator: ", ")) gave the same; "
            + "\(others.isEmpty ? "none" : others.joined(separator: ", ")) did not."
        }
        results[lane] = DifferentialDisagreement(index: index, message: text, kind: kind)
        try? await lanes[lane].store.close()
      }
      if results.allSatisfy({ $0 != nil }) { break }
    }
    if !steps.isEmpty {
      for lane in lanes.indices where results[lane] == nil {
        if let message = await toolsDisagreement(lanes[lane]) {
          results[lane] = DifferentialDisagreement(index: steps.count - 1, message: message, kind: "tools")
        }
      }
    }
    for lane in lanes { try? await lane.store.close() }
    return zip(results, lanes).map { ($0, $1.steps) }
  }

  /// Whether the steps prepare an entity with more than one schema.
  static func evolvesSchemas(_ steps: [DifferentialStep]) -> Bool {
    var prepared: [String: EntitySchema] = [:]
    for step in steps {
      switch step {
      case .race: return true
      case .prepare(let schemas):
        for schema in schemas {
          if let earlier = prepared.updateValue(schema, forKey: schema.name), earlier != schema {
            return true
          }
        }
      default: continue
      }
    }
    return false
  }

  /// The first disagreement of one target's backend, or nil.
  static func firstDisagreement(_ steps: [DifferentialStep], context: CheckContext) async throws
    -> DifferentialDisagreement?
  {
    try await run(steps, contexts: [context])[0].disagreement
  }

  private static func schemaShown(_ step: DifferentialStep, _ prepared: [String: EntitySchema])
    -> EntitySchema?
  {
    switch step {
    case .fetch(let query), .count(let query): prepared[query.entity]
    case .get(let entity, _), .bulkInsert(let entity, _): prepared[entity]
    // After a race either schema may be in force: rows are shown by position.
    case .race: nil
    default: nil
    }
  }

  /// Compares a backend's outcome with the reference's, moving the reference on; returns what
  /// differs, or nil.
  static func compare(
    _ step: DifferentialStep, _ outcome: DifferentialOutcome, _ reference: inout DifferentialReference
  ) -> String? {
    let shown = schemaShown(step, reference.prepared)
    if case .race(let schema, let batch) = step {
      let candidates = reference.raceCandidates(schema, batch)
      if let chosen = candidates.first(where: { raceMatches(outcome, $0.outcome) }) {
        reference = chosen.state
        return nil
      }
      return "backend gave \(outcome.rendered(shown)); the reference allows either "
        + candidates.map { $0.outcome.rendered(shown) }.joined(separator: " or ")
    }
    let expected = reference.run(step)
    if outcome.same(as: expected) { return nil }
    return "backend gave \(outcome.rendered(shown)); reference gave \(expected.rendered(shown))"
  }

  private static func raceMatches(_ outcome: DifferentialOutcome, _ candidate: DifferentialOutcome) -> Bool {
    guard case .race(let prepare, let batch, let rows) = outcome,
      case .race(let expectedPrepare, let expectedBatch, let expectedRows) = candidate
    else { return false }
    let batchMatches: Bool
    if case .error("any", _, _, _, _, _) = expectedBatch {
      batchMatches = batch.isError
    } else {
      batchMatches = batch.same(as: expectedBatch)
    }
    return batchMatches && prepare.same(as: expectedPrepare) && rows.same(as: expectedRows)
  }

  /// A short name for a kind of disagreement: the step's kind and what each side gave.
  static func kind(_ step: DifferentialStep, _ outcome: DifferentialOutcome, _ schema: EntitySchema?)
    -> String
  {
    func shape(_ outcome: DifferentialOutcome) -> String {
      switch outcome {
      case .summary: "applied"
      case .rows: "rows"
      case .count: "count"
      case .groups: "groups"
      case .prepared: "prepared"
      case .error(let code, _, _, _, _, _): code
      case .unexpected: "unexpected error"
      case .race(let prepare, let batch, _): "race(\(shape(prepare)), \(shape(batch)))"
      }
    }
    let name: String =
      switch step {
      case .prepare: "prepare"
      case .apply: "apply"
      case .bulkInsert: "bulk insert"
      case .fetch: "fetch"
      case .count: "count"
      case .get: "get"
      case .reopen: "reopen"
      case .race: "race"
      case .aggregate: "aggregate"
      }
    return "\(name): backend \(shape(outcome))"
  }

  /// Runs a step on a lane's store.
  static func perform(_ step: DifferentialStep, on lane: inout DifferentialLane) async -> DifferentialOutcome
  {
    let store = lane.store
    do {
      switch step {
      case .prepare(let schemas):
        try await store.prepare(schemas: schemas)
        // The store lists each entity just prepared with exactly its schema.
        let listed = try await store.storedSchemas()
        for schema in schemas where !listed.contains(schema) {
          return .unexpected(
            "storedSchemas() listed \(listed.map(\.name)) without \(schema.name)'s prepared schema")
        }
        return .prepared
      case .apply(let operations): return .summary(try await store.apply(ChangeSet(operations)))
      case .bulkInsert(let entity, let rows):
        guard let schema = store.schema(of: entity) else {
          throw CofferError(.unknownEntity, "Entity '\(entity)' was not prepared.", entity: entity)
        }
        return .summary(
          try await store.backend.insert(into: schema, count: rows.count) {
            try QueryValidator.validate(rows[$0], schema: schema)
          })
      case .fetch(let query):
        let rows = try await store.fetchRows(query)
        if let schema = store.schema(of: query.entity) {
          // The in-place read must hand over exactly the rows the fetch returned.
          var read: [Row] = []
          try await store.backend.read(QueryValidator.validate(query, schema: schema)) {
            read.append(try Row($0))
          }
          if !DifferentialOutcome.rows(read).same(as: .rows(rows)) {
            return .unexpected("read(_:_:) handed over \(read) where fetch(_:) returned \(rows)")
          }
        }
        return .rows(rows)
      case .count(let query): return .count(try await store.countRows(query))
      case .aggregate(let aggregation): return .groups(try await store.aggregateRows(aggregation))
      case .get(let entity, let ids):
        // Through a backend's fast path for lookups by id (Query.lookedUpIDs(in:)).
        return .rows(try await store.getRows(entity: entity, ids: ids))
      case .reopen:
        guard lane.target.capabilities.contains(.reopenable) else { return .prepared }
        lane.store = try await lane.context.reopen(store)
        try await lane.store.prepare(schemas: lane.reference.stored)
        return .prepared
      case .race(let schema, let batch):
        async let prepared = outcome { try await store.prepare(schemas: [schema]) }
        async let applied = outcome { try await store.apply(ChangeSet(batch)) }
        let (prepare, apply) = await (prepared, applied)
        let rows: DifferentialOutcome
        do {
          rows = .rows(try await store.fetchRows(Query(entity: schema.name)))
        } catch {
          rows = DifferentialOutcome(error)
        }
        return .race(prepare: prepare, batch: apply, rows: rows)
      }
    } catch {
      return DifferentialOutcome(error)
    }
  }

  private static func outcome(_ body: () async throws -> Void) async -> DifferentialOutcome {
    do {
      try await body()
      return .prepared
    } catch {
      return DifferentialOutcome(error)
    }
  }

  private static func outcome(_ body: () async throws -> ChangeSummary) async -> DifferentialOutcome {
    do {
      return .summary(try await body())
    } catch {
      return DifferentialOutcome(error)
    }
  }

  /// A shorter sequence that still fails on the context's target: the failing prefix, then
  /// chunks, steps, single operations and bulk rows removed greedily while it keeps failing,
  /// within `budget` replays.
  static func shrink(
    _ steps: [DifferentialStep], failingAt first: DifferentialDisagreement, context: CheckContext,
    budget: Int = 300
  ) async throws -> [DifferentialStep] {
    var current = Array(steps[...first.index])
    var replays = 0
    /// Where a shorter sequence fails the same way, if it does.
    func stillFails(_ candidate: [DifferentialStep]) async throws -> Int? {
      replays += 1
      if candidate.isEmpty { return nil }
      guard let found = try await firstDisagreement(candidate, context: context), found.kind == first.kind
      else {
        return nil
      }
      return found.index
    }
    var chunk = max(1, current.count / 2)
    while replays < budget {
      var start = 0
      while start < current.count && replays < budget {
        var candidate = current
        candidate.removeSubrange(start..<min(current.count, start + chunk))
        if let failing = try await stillFails(candidate) {
          current = Array(candidate[...failing])
        } else {
          start += chunk
        }
      }
      if chunk == 1 { break }
      chunk /= 2
    }
    for position in current.indices.reversed() where replays < budget && position < current.count {
      var parts = parts(of: current[position])
      guard parts > 1 else { continue }
      var part = parts - 1
      while part >= 0 && parts > 1 && replays < budget {
        var candidate = current
        candidate[position] = removing(part, from: current[position])
        if let failing = try await stillFails(candidate), failing >= position {
          current = Array(candidate[...failing])
          parts -= 1
        }
        part -= 1
      }
    }
    return current
  }

  private static func parts(of step: DifferentialStep) -> Int {
    switch step {
    case .apply(let operations): operations.count
    case .bulkInsert(_, let rows): rows.count
    case .race(_, let batch): batch.count
    default: 0
    }
  }

  private static func removing(_ part: Int, from step: DifferentialStep) -> DifferentialStep {
    switch step {
    case .apply(var operations):
      operations.remove(at: part)
      return .apply(operations)
    case .bulkInsert(let entity, var rows):
      rows.remove(at: part)
      return .bulkInsert(entity: entity, rows: rows)
    case .race(let schema, var batch):
      batch.remove(at: part)
      return .race(schema: schema, batch: batch)
    default: return step
    }
  }

  /// The steps as a numbered listing, each row shown with the field names in force at its step.
  static func listing(_ steps: [DifferentialStep]) -> String {
    var reference = DifferentialReference()
    return steps.enumerated().map { position, step in
      let schemas = reference.prepared
      _ = reference.run(step)
      return "  \(position + 1). " + DifferentialRendering.step(step, schemas)
    }.joined(separator: "\n")
  }
}
