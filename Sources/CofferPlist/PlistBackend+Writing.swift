import Coffer
import Foundation
import Synchronization

extension PlistBackend {
  /// Applies a change to a copy of the state, writes it as the policy says, then publishes it.
  /// Readers keep seeing the previous state until the new one is complete (and, when the policy
  /// is immediate, on disk).
  ///
  /// `change` returns how many operations it applied (they count towards
  /// ``Persistence/everyChanges(_:)``) and whether it changed anything at all.
  func mutate<R>(_ change: (inout State) throws -> (operations: Int, changed: Bool, result: R)) throws -> R {
    try writer.withLock { _ in
      var next = try openState()
      let (operations, changed, result) = try change(&next)
      guard changed else { return result }
      next.unsavedOperations += operations
      next.isDirty = true
      switch configuration.persistence {
      case .immediate:
        try write(&next)
      case .everyChanges(let limit):
        if operations > 0, next.unsavedOperations >= max(1, limit) { try write(&next) }
      case .interval(let delay):
        if !next.timerScheduled {
          next.timerScheduled = true
          Task { [weak self] in
            try? await Task.sleep(for: delay)
            try? await self?.persistScheduled()
          }
        }
      case .manual:
        break
      }
      state.withLock { $0 = next }
      return result
    }
  }

  private func persistScheduled() async throws {
    state.withLock { $0.timerScheduled = false }
    try await persist()
  }

  /// Re-encodes the rows a batch touched; rows it removed leave the cache.
  func updateCache(_ next: inout State, for changes: ChangeSet) {
    var swept: Set<String> = []
    for operation in changes.operations {
      let entity = operation.entity
      guard let schema = next.tables.schemas[entity] else { continue }
      let id: Value
      switch operation {
      case .insert(_, let row), .update(_, let row), .upsert(_, let row): id = row[schema.idPosition]
      case .delete(_, let deleted): id = deleted
      case .deleteMatching:
        swept.insert(entity)
        continue
      }
      if let stored = try? next.tables.get(entity: entity, ids: [id]).first {
        next.cache[entity, default: [:]][id] = RowFragments.encode(stored, schema: schema, format: format)
      } else {
        next.cache[entity]?[id] = nil
      }
    }
    for entity in swept {
      guard let cached = next.cache[entity], let schema = next.tables.schemas[entity] else { continue }
      let stored = (try? next.tables.get(entity: entity, ids: Array(cached.keys))) ?? []
      let present = Set(stored.map { $0[schema.idPosition] })
      next.cache[entity] = cached.filter { present.contains($0.key) }
    }
  }

  /// Writes the whole state to the file, encoding rows missing from the cache.
  func write(_ next: inout State) throws {
    var entities: [StoreWriter.Entity] = []
    for (name, schema) in next.tables.schemas.sorted(by: { $0.key < $1.key }) {
      var cached = next.cache[name] ?? [:]
      if cached.count != next.tables.rowCount(name) {
        for row in next.tables.allRows(name) where cached[row[schema.idPosition]] == nil {
          cached[row[schema.idPosition]] = RowFragments.encode(row, schema: schema, format: format)
        }
      }
      next.cache[name] = cached
      entities.append(StoreWriter.Entity(schema: schema, rows: cached.values))
    }
    let bytes = StoreWriter.file(entities, format: format)
    try file.replace(with: bytes)
    next.unsavedOperations = 0
    next.isDirty = false
  }
}
