@_spi(Backend) import Coffer
import Foundation

@_spi(Backend) extension PlistBackend: StorageInspecting {
  /// The store layout's version (the file is written in it), the file's size, and the format
  /// written, the persistence policy and the number of entities. Reads no row, and not the file.
  public func describeStorage() async throws -> StorageDescription {
    let tables = try snapshot()
    let size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value
    return StorageDescription(
      formatVersion: size == nil ? nil : String(StoreLayout.version), bytesOnDisk: size,
      details: [
        .init("format", format.rawValue), .init("persistence", Self.describe(configuration.persistence)),
        .init("entities", String(tables.schemas.count)),
      ])
  }

  /// Reads the file again from disk, as opening the store would: a file that is gone or no
  /// longer reads (something other than this store changed it while it was open) is a
  /// problem, since the next open would fail. When every change is saved, the file must also
  /// hold exactly the entities, schemas and rows the store holds in memory; each entity that
  /// differs is a problem.
  ///
  /// Runs on the store's writer thread, between writes, so it never reads a file being replaced.
  public func checkStorage() async throws -> [IntegrityProblem] {
    try await blocking.run { [self] in try checkNow() }
  }

  private func checkNow() throws -> [IntegrityProblem] {
    let isDirty = try writer.withLock { state in
      guard state.lock != nil else { throw closedError() }
      return state.isDirty
    }
    let tables = try snapshot()
    guard let bytes = try file.read() else {
      return [
        IntegrityProblem(
          "The store file is gone: something other than this store removed it while it was open. Persist or "
            + "close the store to write it again.")
      ]
    }
    let loaded: StoreReader.Loaded
    do {
      loaded = try StoreReader.load(bytes, file: file)
    } catch let error as CofferError {
      return [
        IntegrityProblem(
          "The store file no longer reads, so the store will not open again: \(error.message) Something other "
            + "than this store changed it while it was open; persist the store to write it again.")
      ]
    }
    // Unsaved changes are in memory only: the file is rightly behind.
    if isDirty { return [] }
    return differences(between: loaded, and: tables)
  }

  /// One problem per entity whose schema or rows in the file differ from those in memory.
  private func differences(between loaded: StoreReader.Loaded, and tables: InMemoryTables)
    -> [IntegrityProblem]
  {
    let inMemory = tables.schemas
    let inFile = Dictionary(loaded.schemas.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    let rowsInFile = Dictionary(
      loaded.rows.map { ($0.entity, $0.rows) }, uniquingKeysWith: { first, _ in first })
    var problems: [IntegrityProblem] = []
    let change = "Something other than this store changed the file while it was open"
    for entity in Set(inMemory.keys).union(inFile.keys).sorted(by: {
      $0.utf8.lexicographicallyPrecedes($1.utf8)
    }) {
      guard let schema = inMemory[entity] else {
        problems.append(
          IntegrityProblem(
            entity: entity, "The store file holds this entity, but the store does not. \(change)."))
        continue
      }
      guard let stored = inFile[entity] else {
        problems.append(IntegrityProblem(entity: entity, "The store file lacks this entity. \(change)."))
        continue
      }
      guard stored == schema else {
        problems.append(
          IntegrityProblem(entity: entity, "The store file holds another schema for it. \(change)."))
        continue
      }
      let rows = rowsInFile[entity] ?? []
      var differing = 0
      var ids: Set<Value> = []
      for row in rows {
        let id = row[schema.idPosition]
        ids.insert(id)
        if tables.row(of: entity, id: id) != row { differing += 1 }
      }
      let absent = tables.allRows(entity).count { !ids.contains($0[schema.idPosition]) }
      if differing > 0 || absent > 0 {
        var parts: [String] = []
        if differing > 0 {
          parts.append(
            "holds \(differing) row\(differing == 1 ? "" : "s") that the store does not hold as \(differing == 1 ? "it is" : "they are")"
          )
        }
        if absent > 0 { parts.append("lacks \(absent) row\(absent == 1 ? "" : "s") that the store holds") }
        problems.append(
          IntegrityProblem(
            entity: entity, "The store file \(parts.joined(separator: " and ")). \(change)."))
      }
    }
    return problems
  }

  /// A persistence policy in words.
  private static func describe(_ persistence: Persistence) -> String {
    switch persistence {
    case .immediate: "immediate"
    case .everyChanges(let count): "every \(count) changes"
    case .interval(let delay): "after \(delay)"
    case .manual: "manual"
    }
  }
}
