import Foundation

/// Writing a whole graph to a property-list file and loading it back.
///
/// A snapshot keeps every record the graph holds — its value, what the store held, and so
/// whether it is an unsaved insert, update or deletion — with each entity's schema, so loading
/// it restores the graph exactly as it was. Values are written as Coffer ``Value``s, so dates
/// keep their microseconds and every number its exact value.
extension ModelGraph {
  /// Writes the graph to a binary property-list file, replacing it atomically.
  ///
  /// ```swift
  /// try graph.write(to: URL(filePath: "/tmp/graph.plist"))
  /// ```
  ///
  /// - Throws: ``CofferError/Code/io`` naming the path when the file cannot be written.
  public func write(to url: URL) throws {
    let snapshot = state.withLock { state in
      var entities: [String: GraphSnapshot.Entity] = [:]
      for (key, entry) in state.entries {
        guard let schema = state.adapters[key.entity]?.schema else { continue }
        entities[key.entity, default: .init(schema: schema, records: [])].records.append(
          .init(stored: entry.stored?.values, current: entry.current?.row.values))
      }
      return GraphSnapshot(entities: entities.keys.sorted().compactMap { entities[$0] })
    }
    do {
      let encoder = PropertyListEncoder()
      encoder.outputFormat = .binary
      try encoder.encode(snapshot).write(to: url, options: .atomic)
    } catch {
      throw CofferError(
        .io,
        "Could not write the graph snapshot: \(error.localizedDescription). Check the folder exists and is writable.",
        path: url.path, underlying: error)
    }
  }

  /// Replaces everything the graph holds with the snapshot in a file, including its unsaved
  /// changes. The undo history is cleared and no events are emitted.
  ///
  /// - Throws: ``CofferError/Code/io`` when the file cannot be read, ``CofferError/Code/corruptStore``
  ///   when it is not a graph snapshot, ``CofferError/Code/schemaMismatch`` when the graph
  ///   already uses one of its entities with another schema. The graph is unchanged then.
  public func load(from url: URL) throws {
    let data: Data
    do {
      data = try Data(contentsOf: url)
    } catch {
      throw CofferError(
        .io, "Could not read the graph snapshot: \(error.localizedDescription).", path: url.path,
        underlying: error)
    }
    let snapshot: GraphSnapshot
    do {
      snapshot = try PropertyListDecoder().decode(GraphSnapshot.self, from: data)
    } catch {
      throw CofferError(
        .corruptStore,
        "The file is not a Coffer graph snapshot, or it is damaged; write it again with write(to:).",
        path: url.path, underlying: error)
    }
    guard snapshot.format == GraphSnapshot.currentFormat else {
      throw CofferError(
        .corruptStore, "The graph snapshot has format \(snapshot.format); this Coffer reads format 1.",
        path: url.path)
    }
    var entries: [ModelKey: GraphEntry] = [:]
    for entity in snapshot.entities {
      let schema = entity.schema
      for record in entity.records {
        let current = record.current.map(Row.init)
        let stored = record.stored.map(Row.init)
        guard let row = current ?? stored, row.count == schema.fields.count,
          (stored?.count ?? row.count) == row.count
        else {
          throw CofferError(
            .corruptStore, "A \(schema.name) record in the graph snapshot does not fit its schema.",
            entity: schema.name, path: url.path)
        }
        let key = ModelKey(entity: schema.name, id: row[schema.idPosition])
        entries[key] = GraphEntry(stored: stored, current: current.map { GraphValue(row: $0, value: nil) })
      }
    }
    try state.withLock { state in
      for entity in snapshot.entities {
        if let known = state.adapters[entity.schema.name], known.schema != entity.schema {
          throw CofferError(
            .schemaMismatch,
            "The snapshot's \(entity.schema.name) schema differs from the one this graph uses; "
              + "load it into a graph that has not used \(entity.schema.name) with another version.",
            entity: entity.schema.name, path: url.path)
        }
      }
      for entity in snapshot.entities where state.adapters[entity.schema.name] == nil {
        state.adapters[entity.schema.name] = .schemaOnly(entity.schema)
      }
      state.entries = entries
      state.dirty = Set(entries.filter { $0.value.isDirty }.keys)
      state.forgetHistory()
    }
  }
}

/// The file form of a graph: entities with their schemas and records.
struct GraphSnapshot: Codable {
  static let currentFormat = 1

  struct Entity: Codable {
    var schema: EntitySchema
    var records: [Record]
  }

  struct Record: Codable {
    /// The source's row, or absent when the source has none.
    var stored: [Value]?
    /// The graph's row, or absent when the record is deleted.
    var current: [Value]?
  }

  var format = currentFormat
  var entities: [Entity]
}
