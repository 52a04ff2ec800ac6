@_spi(Backend) import Coffer
import CofferWire
import Foundation
import Hummingbird
import Synchronization

/// What the server remembers of idempotency keys besides what each store holds: the summaries
/// of recent keyed batches.
struct IdempotencyMemory: Sendable {
  /// The entity each store keeps the keys of applied batches in, in the same batch as the
  /// batch's own rows: hidden from every route and from the change feed.
  static let entity = "coffer.idempotency"
  /// How many recent summaries are kept in memory.
  static let remembered = 4096

  /// The key entity's schema: the key, a digest of the request, and when it was applied.
  static let schema: EntitySchema? = try? EntitySchema(
    name: entity,
    fields: [Field("key", .string), Field("digest", .string), Field("appliedAt", .date)],
    idField: "key", indexes: [.on("appliedAt")])

  /// Recent summaries by store and key, oldest first for eviction.
  var summaries: [String: WireSummary] = [:]
  var order: [String] = []
  /// When each store's expired keys were last removed.
  var swept: [ObjectIdentifier: Date] = [:]

  mutating func remember(_ summary: WireSummary, for key: String) {
    if summaries.updateValue(summary, forKey: key) == nil { order.append(key) }
    if order.count > Self.remembered {
      let drop = order.count - Self.remembered
      for old in order.prefix(drop) { summaries[old] = nil }
      order.removeFirst(drop)
    }
  }
}

extension ServerState {
  /// `POST …/v1/apply`.
  func apply(_ call: Call) async throws -> Response {
    let request = try decode(WireBatch.self, from: call.body, reading: WireBatchJSON.read)
    let key = try idempotencyKey(call.request)
    var operations = request.operations.map(\.operation)
    var layouts: [String: EntitySchema] = [:]
    for (entity, digest) in request.layoutDigests ?? [:] where request.layouts?[entity] == nil {
      let stored = try await schema(entity, layout: nil, in: call)
      layouts[entity] = try storedLayout(named: digest, schema: stored, in: call)
    }
    for (entity, layout) in request.layouts ?? [:] {
      _ = try await schema(entity, layout: layout, in: call)
      layouts[entity] = layout
    }
    var preconditions: [ChangeSet.Precondition] = []
    for wire in request.preconditions ?? [] {
      guard let precondition = wire.precondition else {
        throw CofferError(
          .invalidInput, "A precondition names exactly one of rows and count.", store: call.storeName,
          entity: wire.query.entity)
      }
      try checkDepth(precondition.query.filter, in: call, entity: precondition.query.entity)
      preconditions.append(precondition)
    }
    for operation in operations {
      try call.check(entity: operation.entity)
      switch operation {
      case .deleteMatching(let entity, let filter):
        try checkDepth(filter, in: call, entity: entity)
        if call.grant.entities != nil { try await refuseRulesBeyondGrant(deleting: entity, call) }
      case .updateMatching(let entity, let filter, _):
        try checkDepth(filter, in: call, entity: entity)
      case .delete(let entity, _) where call.grant.entities != nil:
        try await refuseRulesBeyondGrant(deleting: entity, call)
      default: break
      }
    }
    for precondition in preconditions { try call.check(entity: precondition.query.entity) }
    // An entity the file keeps but this handle has not prepared (the server restarted over the
    // store, and the client prepared before that) is prepared from what is stored.
    for entity in Set(operations.map(\.entity) + preconditions.map(\.query.entity))
    where call.store.schema(of: entity) == nil {
      _ = try await schema(entity, layout: nil, in: call)
    }
    let references = request.references ?? .enforce
    var digest = ""
    let legacy = { try Self.legacyDigest(request, references: references) }
    if let key {
      digest = try Self.digest(request, references: references)
      if let replay = try await replay(key: key, digest: digest, legacy: legacy, call) {
        return try json(replay)
      }
      let keySchema = try await idempotencySchema(call.store)
      operations.insert(
        .insert(entity: IdempotencyMemory.entity, row: Row([.string(key), .string(digest), .date(Date())])),
        at: 0)
      layouts[IdempotencyMemory.entity] = keySchema
    }
    let summary: ChangeSummary
    do {
      switch references {
      case .enforce:
        summary = try await call.store.apply(
          ChangeSet(operations, layouts: layouts, preconditions: preconditions))
      case .expanded:
        summary = try await applyExpanded(operations, layouts: layouts, preconditions: preconditions, call)
      }
    } catch let error as CofferError
      where key != nil && error.code == .duplicateID && error.entity == IdempotencyMemory.entity
    {
      // Another request with the same key committed first.
      if let key, let replay = try await replay(key: key, digest: digest, legacy: legacy, call) {
        return try json(replay)
      }
      throw error
    }
    var answer = WireSummary(summary)
    if key != nil { answer.inserted = max(0, answer.inserted - 1) }
    if let key {
      let remembered = answer
      let name = Self.memoryKey(call.store, key)
      idempotency.withLock { $0.remember(remembered, for: name) }
      try? await sweepKeys(call.store)
    }
    return try json(answer)
  }

  /// Applies a batch whose references the client's own store already expanded: each operation
  /// and precondition checked against its schema, then straight to the backend.
  private func applyExpanded(
    _ operations: [ChangeSet.Operation], layouts: [String: EntitySchema],
    preconditions: [ChangeSet.Precondition],
    _ call: Call
  ) async throws -> ChangeSummary {
    var schemas = layouts
    var checked: [ChangeSet.Operation] = []
    checked.reserveCapacity(operations.count)
    do {
      for operation in operations {
        let schema: EntitySchema
        if let known = schemas[operation.entity] {
          schema = known
        } else {
          schema = try await self.schema(operation.entity, layout: nil, in: call)
          schemas[operation.entity] = schema
        }
        checked.append(try QueryValidator.validate(operation, schema: schema))
      }
      var checkedPreconditions: [ChangeSet.Precondition] = []
      for precondition in preconditions {
        // The filter names the entity's fields; the rows pinned are in the query's layout,
        // which may hold fewer (the ids alone, for the rows a cascade deletes).
        let entity = precondition.query.entity
        let schema: EntitySchema
        if let known = schemas[entity] {
          schema = known
        } else {
          schema = try await self.schema(entity, layout: nil, in: call)
          schemas[entity] = schema
        }
        let layout = precondition.query.layout ?? schema
        guard layout.name == entity else {
          throw CofferError(
            .invalidQuery, "A precondition's layout describes entity '\(layout.name)', not '\(entity)'.",
            entity: entity)
        }
        var checked = precondition
        checked.query = try QueryValidator.validate(precondition.query, schema: schema)
        checked.query.layout = layout
        if case .rows(let rows) = precondition.expectation {
          checked.expectation = .rows(try rows.map { try QueryValidator.validate($0, schema: layout) })
        }
        checkedPreconditions.append(checked)
      }
      if !checkedPreconditions.isEmpty && !call.store.backend.capabilities.contains(.preconditions) {
        throw CofferError(
          .unsupported, "This store cannot check a batch's preconditions.", store: call.storeName)
      }
      if checked.isEmpty && checkedPreconditions.isEmpty { return ChangeSummary() }
      return try await call.store.backend.apply(
        ChangeSet(checked, layouts: schemas, preconditions: checkedPreconditions))
    } catch let error as CofferError {
      throw error.inStore(call.storeName)
    }
  }

  /// A token limited to some entities may not delete rows whose reference rules would change
  /// rows of entities it may not name.
  private func refuseRulesBeyondGrant(deleting entity: String, _ call: Call) async throws {
    for schema in try await call.store.storedSchemas() where !call.grant.allows(entity: schema.name) {
      for reference in schema.references
      where reference.entity == entity && (reference.onDelete == .cascade || reference.onDelete == .nullify) {
        throw Forbidden(
          error: CofferError(
            .accessDenied,
            "Deleting \(entity) rows can change \(schema.name) rows through a reference rule, and this token may "
              + "not use entity '\(schema.name)'.", store: call.storeName, entity: entity))
      }
    }
  }

  /// The request's idempotency key, if it has one.
  private func idempotencyKey(_ request: Request) throws -> String? {
    let name = WirePath.idempotencyKey.lowercased()
    guard let key = request.headers.first(where: { $0.name.canonicalName == name })?.value else { return nil }
    guard !key.isEmpty, key.utf8.count <= WirePath.maxIdempotencyKeyLength else {
      throw CofferError(
        .invalidInput, "An Idempotency-Key is 1 to \(WirePath.maxIdempotencyKeyLength) bytes long.")
    }
    return key
  }

  /// The answer to a batch whose key was applied before, `nil` when it was not.
  private func replay(key: String, digest: String, legacy: () throws -> String, _ call: Call) async throws
    -> WireSummary?
  {
    guard let schema = IdempotencyMemory.schema else { return nil }
    if call.store.schema(of: IdempotencyMemory.entity) == nil {
      let stored = try await call.store.storedSchemas()
      guard stored.contains(where: { $0.name == IdempotencyMemory.entity }) else { return nil }
      // Kept by this store's file but not yet prepared by this handle (the server restarted
      // over it): read through the backend only once the handle knows the entity.
      _ = try await idempotencySchema(call.store)
    }
    let rows = try await call.store.backend.get(entity: schema, ids: [.string(key)])
    guard let row = rows.first else { return nil }
    let stored: String = if case .string(let text) = row[1] { text } else { "" }
    let same = try stored == digest || (!stored.hasPrefix("s") && stored == legacy())
    guard same else {
      throw KeyReused(
        error: CofferError(
          .invalidInput,
          "This Idempotency-Key was used for another request. Use a new key for each distinct batch.",
          store: call.storeName))
    }
    let name = Self.memoryKey(call.store, key)
    var summary = idempotency.withLock { $0.summaries[name] } ?? WireSummary(ChangeSummary())
    summary.replayed = true
    return summary
  }

  /// Prepares the key entity in a store once.
  private func idempotencySchema(_ store: Store) async throws -> EntitySchema {
    guard let schema = IdempotencyMemory.schema else {
      throw CofferError(.backendFailure, "The server's idempotency entity cannot be described.")
    }
    // Asked of the store itself, not remembered by its identity: a store closed and opened
    // again (a server restarted over the same file) is a new store that prepared nothing.
    if store.schema(of: IdempotencyMemory.entity) == schema { return schema }
    try await store.prepare(schemas: [schema])
    return schema
  }

  /// Removes keys older than the window, at most once every ten minutes a store.
  private func sweepKeys(_ store: Store) async throws {
    let id = ObjectIdentifier(store)
    let now = Date()
    let due = idempotency.withLock { memory -> Bool in
      if let last = memory.swept[id], now.timeIntervalSince(last) < 600 { return false }
      memory.swept[id] = now
      return true
    }
    guard due, let schema = IdempotencyMemory.schema else { return }
    let window = Double(configuration.idempotencyWindow.nanoseconds) / 1e9
    let cutoff = Value.date(now.addingTimeInterval(-window))
    try await store.backend.apply(
      ChangeSet(
        [
          .deleteMatching(
            entity: IdempotencyMemory.entity, filter: .compare(field: "appliedAt", op: .less, value: cutoff))
        ],
        layouts: [IdempotencyMemory.entity: schema]))
  }

  static func memoryKey(_ store: Store, _ key: String) -> String {
    "\(UInt(bitPattern: ObjectIdentifier(store).hashValue)):\(key)"
  }

  /// A digest of a batch, to tell a retry from another batch sent under the same key: SipHash
  /// (128 bits) over its operations' kinds, entities and values (as a store digest hashes
  /// values), then the JSON ``WireBatchJSON`` writes for the rest (filters, layouts with sorted
  /// keys, preconditions). One batch has one digest, so a client that encodes the same batch
  /// again, in any key order or spacing, gets the same one. It starts with `s`; a key stored by
  /// an earlier version holds a ``legacyDigest(_:references:)``.
  static func digest(_ batch: WireBatch, references: WireReferences) throws -> String {
    var hasher = SipHasher(key0: 0x6964_656d_706f_7465, key1: 0x6e74_2062_6174_6368)
    func text(_ string: String) {
      var string = string
      string.withUTF8 { bytes in
        hasher.combine(UInt64(bytes.count))
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
      }
    }
    func values(_ values: [Value]) {
      hasher.combine(UInt64(values.count))
      for value in values { RowDigester.encode(value, into: &hasher) }
    }
    func filter(_ filter: Filter) throws {
      var json = JSONText()
      try WireQueryJSON.append(filter, to: &json)
      hasher.combine(UInt64(json.bytes.count))
      json.bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
    hasher.combine(UInt64(batch.operations.count))
    for operation in batch.operations {
      switch operation.operation {
      case .insert(let entity, let row), .update(let entity, let row), .upsert(let entity, let row):
        let tag: UInt8 =
          switch operation.operation {
          case .insert: 1
          case .update: 2
          default: 3
          }
        hasher.combine(tag)
        text(entity)
        values(row.values)
      case .insertMany(let entity, let source):
        hasher.combine(4 as UInt8)
        text(entity)
        hasher.combine(UInt64(source.count))
        for position in 0..<source.count { values(try source.row(at: position).values) }
      case .delete(let entity, let id):
        hasher.combine(5 as UInt8)
        text(entity)
        RowDigester.encode(id, into: &hasher)
      case .deleteMatching(let entity, let condition):
        hasher.combine(6 as UInt8)
        text(entity)
        try filter(condition)
      case .updateMatching(let entity, let condition, let changes):
        hasher.combine(7 as UInt8)
        text(entity)
        try filter(condition)
        hasher.combine(UInt64(changes.count))
        for change in changes {
          text(change.field)
          switch change.change {
          case .set(let value):
            hasher.combine(0 as UInt8)
            RowDigester.encode(value, into: &hasher)
          case .add(let amount):
            hasher.combine(1 as UInt8)
            RowDigester.encode(amount, into: &hasher)
          }
        }
      }
    }
    var rest = WireBatch(ChangeSet())
    rest.layouts = batch.layouts
    rest.layoutDigests = batch.layoutDigests
    rest.preconditions = batch.preconditions
    try WireBatchJSON.write(rest).withUnsafeBytes { hasher.combine(bytes: $0) }
    let (low, high) = hasher.finalize128()
    return "s" + String(high, radix: 16) + "-" + String(low, radix: 16) + (references == .enforce ? "e" : "x")
  }

  /// The digest earlier versions stored: FNV-1a, 64 bits, over the batch's `Codable` JSON with
  /// sorted keys.
  static func legacyDigest(_ batch: WireBatch, references: WireReferences) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in try encoder.encode(batch) {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01b3
    }
    return String(hash, radix: 16) + (references == .enforce ? "e" : "x")
  }
}

/// An idempotency key sent again with another body: 422.
struct KeyReused: Error {
  let error: CofferError
}
