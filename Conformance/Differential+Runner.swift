import Coffer

/// What one step gave: a summary, rows, a count, or an error (by code and entity).
enum DifferentialOutcome: Equatable {
  case summary(ChangeSummary)
  case rows([Row])
  case count(Int)
  case error(code: String, entity: String?)
  case unexpected(String)

  func rendered(_ schema: EntitySchema?) -> String {
    switch self {
    case .summary(let s): "applied (inserted \(s.inserted), updated \(s.updated), deleted \(s.deleted))"
    case .rows(let rows):
      "\(rows.count) rows ["
        + rows.prefix(20).map { DifferentialRendering.row($0, schema) }.joined(separator: ", ")
        + (rows.count > 20 ? ", …" : "") + "]"
    case .count(let count): "count \(count)"
    case .error(let code, let entity): "\(code) error (entity \(entity ?? "not named"))"
    case .unexpected(let text): "unexpected error: \(text)"
    }
  }
}

/// Replays steps on a fresh scratch store of the target and on an ``InMemoryTables`` reference.
struct DifferentialRunner {
  let context: CheckContext
  let schemas: [EntitySchema]

  /// The first step at which backend and reference disagree, with a description, or `nil`.
  func firstMismatch(_ steps: [DifferentialStep]) async throws -> (index: Int, message: String)? {
    let store = try await context.store()
    try await store.prepare(schemas: schemas)
    var reference = InMemoryTables(storeName: "reference")
    try reference.prepare(schemas)
    let byName = Dictionary(uniqueKeysWithValues: schemas.map { ($0.name, $0) })
    for (index, step) in steps.enumerated() {
      let backend = await run(step, on: store)
      let expected = run(step, on: &reference, byName)
      if backend != expected {
        try? await store.close()
        let schema: EntitySchema? =
          switch step {
          case .fetch(let query), .count(let query): byName[query.entity]
          case .apply: nil
          }
        return (
          index, "backend gave \(backend.rendered(schema)); reference gave \(expected.rendered(schema))"
        )
      }
    }
    try? await store.close()
    return nil
  }

  private func run(_ step: DifferentialStep, on store: Store) async -> DifferentialOutcome {
    do {
      switch step {
      case .apply(let operations): return .summary(try await store.apply(ChangeSet(operations)))
      case .fetch(let query):
        let rows = try await store.fetchRows(query)
        if let schema = store.schema(of: query.entity) {
          // The in-place read must hand over exactly the rows the fetch returned.
          var read: [Row] = []
          try await store.backend.read(QueryValidator.validate(query, schema: schema)) {
            read.append(try Row($0))
          }
          if read != rows {
            return .unexpected("read(_:_:) handed over \(read) where fetch(_:) returned \(rows)")
          }
        }
        return .rows(rows)
      case .count(let query): return .count(try await store.countRows(query))
      }
    } catch let error as CofferError {
      return .error(code: error.code.name, entity: error.entity)
    } catch {
      return .unexpected("\(error)")
    }
  }

  private func run(
    _ step: DifferentialStep, on reference: inout InMemoryTables, _ schemas: [String: EntitySchema]
  ) -> DifferentialOutcome {
    do {
      switch step {
      case .apply(let operations): return .summary(try reference.apply(ChangeSet(operations)))
      case .fetch(let query):
        return .rows(try reference.fetch(QueryValidator.validate(query, schema: schema(query, schemas))))
      case .count(let query):
        return .count(try reference.count(QueryValidator.validate(query, schema: schema(query, schemas))))
      }
    } catch let error as CofferError {
      return .error(code: error.code.name, entity: error.entity)
    } catch {
      return .unexpected("\(error)")
    }
  }

  private func schema(_ query: Query, _ schemas: [String: EntitySchema]) throws -> EntitySchema {
    guard let schema = schemas[query.entity] else { throw CheckFailure("No schema for \(query.entity).") }
    return schema
  }

  /// A shorter sequence that still fails: the failing prefix, then chunks, steps and single
  /// operations removed greedily while it keeps failing, within `budget` replays.
  func shrink(_ steps: [DifferentialStep], failingAt index: Int, budget: Int = 400) async throws
    -> [DifferentialStep]
  {
    var current = Array(steps[...index])
    var replays = 0
    func stillFails(_ candidate: [DifferentialStep]) async throws -> Int? {
      replays += 1
      return candidate.isEmpty ? nil : try await firstMismatch(candidate)?.index
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
      guard case .apply(var operations) = current[position], operations.count > 1 else { continue }
      var op = operations.count - 1
      while op >= 0 && operations.count > 1 && replays < budget {
        var candidate = current
        var fewer = operations
        fewer.remove(at: op)
        candidate[position] = .apply(fewer)
        if let failing = try await stillFails(candidate), failing >= position {
          current = Array(candidate[...failing])
          operations = fewer
        }
        op -= 1
      }
    }
    return current
  }
}
