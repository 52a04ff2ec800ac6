/// Every ``EntityReference`` of a store's entities, looked up both ways: what an entity's
/// rows refer to, and what refers to an entity's rows.
struct ReferenceMap: Sendable {
  /// One reference, with the schema of the entity that holds it.
  struct Link: Sendable {
    /// The referring entity's schema.
    let schema: EntitySchema
    /// The reference.
    let reference: EntityReference
    /// The referring field's position in ``schema``.
    let position: Int
  }

  /// When the catalog was read.
  let readAt = ContinuousClock.now
  /// The schemas of every entity the store holds, by name.
  let schemas: [String: EntitySchema]
  /// The enforced references each entity holds, by the referring entity's name.
  let outgoing: [String: [Link]]
  /// The enforced references to each entity, by the referenced entity's name.
  let incoming: [String: [Link]]

  /// The references among these schemas.
  init(_ schemas: [EntitySchema]) {
    var byName: [String: EntitySchema] = [:]
    var outgoing: [String: [Link]] = [:]
    var incoming: [String: [Link]] = [:]
    for schema in schemas {
      byName[schema.name] = schema
      for reference in schema.references where reference.isEnforced {
        guard let position = schema.position(of: reference.field) else { continue }
        let link = Link(schema: schema, reference: reference, position: position)
        outgoing[schema.name, default: []].append(link)
        incoming[reference.entity, default: []].append(link)
      }
    }
    self.schemas = byName
    self.outgoing = outgoing
    self.incoming = incoming
  }

  /// Whether no entity refers to another: batches need no expansion.
  var isEmpty: Bool { outgoing.isEmpty }

  /// Whether a batch of these operations writes a referring row or deletes a referenced one.
  func involves(_ operations: [ChangeSet.Operation]) -> Bool {
    if isEmpty { return false }
    return operations.contains { operation in
      switch operation {
      case .insert, .update, .upsert, .insertMany, .updateMatching: outgoing[operation.entity] != nil
      case .delete, .deleteMatching: incoming[operation.entity] != nil
      }
    }
  }
}

extension Store {
  /// The references among every entity the store holds, read from the backend's catalog once
  /// and again after this store prepares an entity, so that a delete applies the rules of
  /// entities this store never prepared (written by another app or process).
  ///
  /// Entities that refer or are referred to are prepared on the backend with their stored
  /// schemas, so the expansion can read their rows.
  func referenceMap() async throws -> ReferenceMap {
    if let map = references.withLock({ $0 }) { return map }
    let stored = try await rethrowing { try await backend.prepare([]) }
    let map = ReferenceMap(stored)
    if !map.isEmpty {
      let own = prepared.withLock { $0.schemas }
      var involved: Set<String> = []
      for (entity, links) in map.outgoing {
        involved.insert(entity)
        for link in links { involved.insert(link.reference.entity) }
      }
      let missing = involved.sorted().compactMap { own[$0] == nil ? map.schemas[$0] : nil }
      if !missing.isEmpty { try await rethrowing { _ = try await backend.prepare(missing) } }
    }
    references.withLock { $0 = map }
    return map
  }

  /// Whether writing rows of the entity must check references: it refers to another entity or
  /// another entity refers to it.
  @usableFromInline
  func keepsReferences(_ entity: String) async throws -> Bool {
    let map = try await referenceMap()
    return map.outgoing[entity] != nil || map.incoming[entity] != nil
  }

  /// Forgets the references read from the catalog: an entity was prepared.
  func forgetReferences() { references.withLock { $0 = nil } }

  /// Forgets the references read from the catalog more than `age` ago.
  func forgetReferences(readBefore age: Duration) {
    references.withLock { map in
      if let read = map?.readAt, ContinuousClock.now - read > age { map = nil }
    }
  }
}
