@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Synchronization

@testable import CofferSync

/// One step of a schedule. Its numbers pick among what exists when it runs, so a schedule with
/// steps taken out still runs (what shrinking needs).
enum SyncStep: Hashable, CustomStringConvertible {
  /// A local write on a replica: `kind` picks insert, update, upsert, delete, delete by filter
  /// or a batch of several; `pick` the row and fields; `salt` the values.
  case write(replica: Int, kind: Int, pick: UInt64, salt: UInt64)
  /// The sender makes a message for the receiver from what it believes the receiver has; the
  /// link may drop it or put it in flight twice.
  case send(from: Int, to: Int, fate: Int)
  /// One message in flight on a link (picked by `pick`, so out of order) arrives.
  case deliver(from: Int, to: Int, pick: UInt64, ackFate: Int)
  /// A replica stops and starts again: its store closed and opened, its sync state read anew.
  case restart(replica: Int)
  /// The receiver, when it has merged nothing from the sender, takes a bootstrap from it in pages
  /// of 3 rows, cut off after `cut` pages (0: not cut off). Only in genesis schedules.
  case bootstrap(from: Int, to: Int, cut: Int)

  var description: String {
    switch self {
    case .write(let replica, let kind, let pick, let salt):
      "write(r\(replica), kind \(kind), pick \(pick), salt \(salt))"
    case .send(let from, let to, let fate): "send(r\(from)→r\(to), fate \(fate))"
    case .deliver(let from, let to, let pick, let ackFate):
      "deliver(r\(from)→r\(to), pick \(pick), ack \(ackFate))"
    case .restart(let replica): "restart(r\(replica))"
    case .bootstrap(let from, let to, let cut): "bootstrap(r\(from)→r\(to), cut \(cut))"
    }
  }
}

/// The time a test's replicas share, in microseconds.
final class TickingWall: Sendable {
  let now = Mutex<Int64>(1_800_000_000_000_000)
}

/// A failure of the checker, with what reproduces it.
struct ConvergenceFailure: Error, CustomStringConvertible {
  var seed: UInt64
  var backends: [String]
  var steps: [SyncStep]
  var problem: String
  var description: String {
    "seed \(seed) on \(backends.joined(separator: ", ")): \(problem)\nschedule (\(steps.count) steps):\n"
      + steps.map { "  \($0)" }.joined(separator: "\n")
  }
}

/// Runs random sync schedules between replicas on mixed backends and checks that, at
/// quiescence, every replica holds the same rows and those rows equal an independent merge of
/// every write: per field the value of the last write that changed it, per row deleted when its
/// last delete came after its last write.
struct ConvergenceChecker {
  static let item: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Item",
        fields: [
          Field("id", .int), Field("title", .string), Field("count", .int, isOptional: true),
          Field("score", .double, isOptional: true), Field("done", .bool, isOptional: true),
          Field("at", .date, isOptional: true), Field("blob", .bytes, isOptional: true),
          Field("tag", .uuid, isOptional: true), Field("doc", .document, isOptional: true),
        ], idField: "id", indexes: [.on("count")])
    } catch {
      preconditionFailure("The checker's schema is well formed")
    }
  }()
  static let label: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Label", fields: [Field("name", .string), Field("color", .string, isOptional: true)],
        idField: "name")
    } catch {
      preconditionFailure("The checker's schema is well formed")
    }
  }()
  /// Pins refer to items (cascade) and labels (nullify, and deny by `keeper`), and hold a unique
  /// slot: merges break references and unique values, and every replica must store the same.
  static let pin: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Pin",
        fields: [
          Field("id", .int), Field("item", .int, isOptional: true), Field("label", .string, isOptional: true),
          Field("keeper", .string, isOptional: true), Field("slot", .int, isOptional: true),
          Field("note", .string),
        ], idField: "id", indexes: [.unique("slot")],
        references: [
          EntityReference(field: "item", entity: "Item", onDelete: .cascade),
          EntityReference(field: "label", entity: "Label", onDelete: .nullify),
          EntityReference(field: "keeper", entity: "Label", onDelete: .deny),
        ])
    } catch {
      preconditionFailure("The checker's schema is well formed")
    }
  }()
  static let schemas = [item, label, pin]

  /// The backends replicas are made on, in turn.
  var backends: [String]
  var postgresURL: String?
  /// Genesis schedules: replicas use the implicit genesis stamp, the first two hold rows before
  /// they first take part in sync (see ``presync(replica:)``), and schedules have bootstraps.
  var genesis = false
  /// The subscriptions of the partial replicas, by replica index; the others keep every row.
  var subscriptions: [Int: [SyncSubscription]] = [:]

  /// Two partial replicas' subscriptions: one keeps some items and every label and pin (so pins
  /// refer to items it lacks), the other some items and pins and no label (so pins keep labels it
  /// lacks, by nullify and deny references).
  static let someItemsAllPins = [
    SyncSubscription("Item", where: .compare(field: "count", op: .less, value: 50)),
    SyncSubscription("Label"),
    SyncSubscription("Pin"),
  ]
  static let fewItemsNoLabels = [
    SyncSubscription(
      "Item",
      where: .or([
        .compare(field: "done", op: .equal, value: true),
        .string(field: "title", match: .hasPrefix, pattern: "x"),
      ])),
    SyncSubscription(
      "Pin",
      where: .or([
        .string(field: "note", match: .hasPrefix, pattern: "n1"),
        .compare(field: "slot", op: .notEqual, value: .null),
      ])),
  ]

  /// A random schedule for a seed; with `bootstraps`, some sends are bootstraps instead.
  static func schedule(seed: UInt64, replicas: Int, length: Int, bootstraps: Bool = false) -> [SyncStep] {
    var random = SeededGenerator(seed: seed)
    var steps: [SyncStep] = []
    for _ in 0..<length {
      let roll = Int.random(in: 0..<100, using: &random)
      let a = Int.random(in: 0..<replicas, using: &random)
      var b = Int.random(in: 0..<(replicas - 1), using: &random)
      if b >= a { b += 1 }
      switch roll {
      case 0..<35:
        steps.append(
          .write(
            replica: a, kind: Int.random(in: 0..<13, using: &random), pick: random.next(), salt: random.next()
          ))
      case 35..<65:
        let fate = Int.random(in: 0..<10, using: &random)
        if bootstraps && roll >= 61 {
          steps.append(.bootstrap(from: a, to: b, cut: fate < 6 ? 0 : fate - 5))
        } else {
          steps.append(.send(from: a, to: b, fate: fate))
        }
      case 65..<96:
        steps.append(
          .deliver(from: a, to: b, pick: random.next(), ackFate: Int.random(in: 0..<10, using: &random)))
      default: steps.append(.restart(replica: a))
      }
    }
    return steps
  }

  /// What a run saw, for the summary: rows at the end, and what the link did to messages.
  struct Counts {
    var rows = 0
    var writes = 0
    var merged = 0
    var dropped = 0
    var duplicated = 0
    var gaps = 0
    var restarts = 0
    var bootstraps = 0
    /// Rows left out of the comparison with the reference (see ``ReferenceMerge/undecided()``),
    /// and schedules checked for agreement only.
    var undecided = 0
    var agreementOnly = 0
    var purged = 0
    /// Rows held back or nullified at the end, over all replicas.
    var conflicts = 0
  }

  /// Runs one schedule; `nil` when it converged, else what went wrong.
  func run(seed: UInt64, replicas count: Int, steps: [SyncStep]) async throws -> String? {
    var counts = Counts()
    return try await run(seed: seed, replicas: count, steps: steps, counts: &counts)
  }

  /// Runs one schedule, counting what happened, on scratch replicas removed afterwards.
  func run(seed: UInt64, replicas count: Int, steps: [SyncStep], counts: inout Counts) async throws -> String?
  {
    let chosen = (0..<count).map { backends[$0 % backends.count] }
    var tally = counts
    let problem = try await ReplicaPlaces.using(chosen, postgresURL: postgresURL, label: "check-\(seed)") {
      try await run(places: $0, steps: steps, counts: &tally)
    }
    counts = tally
    return problem
  }

  /// Runs one schedule on the replicas of `places`.
  private func run(places: ReplicaPlaces, steps: [SyncStep], counts: inout Counts) async throws -> String? {
    let tick = Self.tickingWall()
    let urls = places.urls
    var stores: [Store] = []
    var replicas: [SyncReplica] = []
    let mode: SyncReplica.Genesis = genesis ? .implicit : .stamped
    var presync: [Int: [String: [Value: [Value]]]] = [:]
    for index in urls.indices {
      let store = try await places.open(index, schemas: Self.schemas)
      stores.append(store)
      if genesis, let rows = Self.presync(replica: index) {
        try await store.apply(rows)
        presync[index] = try await Self.snapshot(store)
      }
      replicas.append(
        SyncReplica(store: store, wall: tick, genesis: mode, subscriptions: subscriptions[index]))
    }
    var ids: [String] = []
    var reference = ReferenceMerge()
    for (index, replica) in replicas.enumerated() {
      ids.append(try await replica.replicaID())
      // The rows a replica held before sync, written at its genesis stamp (taken just now).
      if let rows = presync[index] { reference.record(before: [:], after: rows, time: tick()) }
    }
    var inFlight: [Int: [SyncMessage]] = [:]
    var believed: [Int: ChangePosition?] = [:]
    func link(_ from: Int, _ to: Int) -> Int { from * 16 + to }

    for step in steps {
      switch step {
      case .write(let r, let kind, let pick, let salt):
        guard r < stores.count else { continue }
        let before = try await Self.snapshot(stores[r])
        let write = Self.write(kind: kind, pick: pick, salt: salt, existing: before)
        let implicit = try await Self.implicitRows(of: replicas[r], among: before)
        do {
          try await stores[r].apply(write)
        } catch let error as CofferError
          where [.duplicateID, .notFound, .referenceViolation, .uniqueViolation].contains(error.code)
        {
          continue
        }
        let after = try await Self.snapshot(stores[r])
        counts.writes += 1
        reference.record(
          before: before, after: after, time: tick(), whole: implicit, named: Self.named(by: write))
        try await replicas[r].stamp()
      case .send(let from, let to, let fate):
        // Partial replicas sync with full ones only (documented).
        guard from < stores.count, to < stores.count, subscriptions[from] == nil || subscriptions[to] == nil
        else { continue }
        let after = believed[link(from, to)] ?? nil
        let message = try await replicas[from].message(after: after, for: subscriptions[to])
        if fate == 0 {  // dropped
          counts.dropped += 1
          continue
        }
        inFlight[link(from, to), default: []].append(message)
        if fate == 1 {  // duplicated
          inFlight[link(from, to), default: []].append(message)
          counts.duplicated += 1
        }
        if fate >= 5 { believed[link(from, to)] = message.to }  // the sender goes on without waiting
      case .deliver(let from, let to, let pick, let ackFate):
        guard from < stores.count, to < stores.count, var queue = inFlight[link(from, to)], !queue.isEmpty
        else {
          continue
        }
        let message = queue.remove(at: Int(pick % UInt64(queue.count)))
        inFlight[link(from, to)] = queue
        let receipt = try await replicas[to].receive(message)
        switch receipt {
        case .merged(let n): counts.merged += n
        case .gap: counts.gaps += 1
        case .duplicate: break
        }
        if ackFate != 0 || receipt == .gap {
          believed[link(from, to)] = try await replicas[to].position(of: ids[from])
        }
      case .restart(let r):
        guard r < stores.count else { continue }
        counts.restarts += 1
        if !places.isVolatile(r) {
          try await stores[r].close()
          stores[r] = try await places.open(r, schemas: Self.schemas)
        }
        replicas[r] = SyncReplica(
          store: stores[r], wall: tick, genesis: mode, subscriptions: subscriptions[r])
      case .bootstrap(let from, let to, let cut):
        guard from < stores.count, to < stores.count,
          try await replicas[to].position(of: ids[from]) == nil
        else { continue }
        // As `Synchronizer` does: no rows to a replica that holds all of the sender's genesis.
        let (source, target) = (replicas[from], replicas[to])
        let stamp = try await source.genesisStamp()
        var rows = true
        if let stamp { rows = try await target.genesisHeld() != stamp }
        let pages = BootstrapPages()
        do {
          try await source.bootstrap(pageSize: 3, includingRows: rows) { page in
            if cut > 0, await pages.next() >= cut { throw BootstrapPages.Cut() }
            _ = try await target.receive(bootstrap: page)
          }
          counts.bootstraps += 1
        } catch is BootstrapPages.Cut {
          continue
        }
      }
    }
    if let problem = try await Self.quiesce(replicas, ids: ids) { return problem }
    let expected = try reference.rows()
    if let problem = try await comparePartial(stores, urls: urls, with: reference) { return problem }
    counts.rows = expected.values.reduce(0) { $0 + $1.count }
    let (undecided, agreementOnly) = reference.undecided()
    counts.undecided += undecided.count
    if agreementOnly { counts.agreementOnly += 1 }
    if let problem = try await Self.compare(
      full(stores), urls: full(urls), with: expected, undecided: undecided, agreementOnly: agreementOnly)
    {
      return problem
    }
    for replica in replicas { counts.conflicts += try await replica.conflicts().count }
    // Every replica up to date purges all its tombstones: nothing changes, nothing comes back.
    for replica in replicas { counts.purged += try await replica.purgeTombstones(olderThan: .zero) }
    if let problem = try await Self.quiesce(replicas, ids: ids) { return "after purging: " + problem }
    if let problem = try await Self.compare(
      full(stores), urls: full(urls), with: expected, undecided: undecided, agreementOnly: agreementOnly)
    {
      return "after purging: " + problem
    }
    if let problem = try await comparePartial(stores, urls: urls, with: reference) {
      return "after purging: " + problem
    }
    for store in stores { try await store.close() }
    return nil
  }

  /// The elements of the replicas that keep every row.
  func full<T>(_ all: [T]) -> [T] { all.indices.filter { subscriptions[$0] == nil }.map { all[$0] } }

  /// Whether each partial replica holds exactly the reference merge restricted to its
  /// subscriptions.
  func comparePartial(_ stores: [Store], urls: [String], with reference: ReferenceMerge) async throws
    -> String?
  {
    for (index, list) in subscriptions.sorted(by: { $0.key < $1.key }) where index < stores.count {
      let rows = try await Self.snapshot(stores[index])
      let expected = try reference.rows(keeping: list)
      if rows != expected {
        return
          "partial replica r\(index) (\(urls[index].prefix(while: { $0 != ":" }))) differs from the reference "
          + "merge restricted to its subscriptions: " + ReferenceMerge.difference(rows, expected)
      }
    }
    return nil
  }

  /// Every link delivers reliably until no message carries anything new; a problem if that never
  /// happens.
  static func quiesce(_ replicas: [SyncReplica], ids: [String]) async throws -> String? {
    var rounds = 0
    while true {
      rounds += 1
      var moved = false
      for from in replicas.indices {
        for to in replicas.indices where from != to {
          // Partial replicas sync with full ones only (documented).
          if await replicas[from].subscriptions != nil, await replicas[to].subscriptions != nil { continue }
          while true {
            let message = try await replicas[from].message(
              after: try await replicas[to].position(of: ids[from]), for: await replicas[to].subscriptions)
            if message.isEmpty { break }
            if case .merged(let n) = try await replicas[to].receive(message), n > 0 { moved = true }
          }
        }
      }
      if !moved { return nil }
      if rounds > 20 { return "no quiescence after 20 rounds of reliable delivery" }
    }
  }

  /// Whether every store holds the expected rows and all have one digest.
  ///
  /// Rows in `undecided` are left out of the comparison with the reference (the replicas must
  /// still agree on them: same digest); with `agreementOnly`, every replica is compared with the
  /// first instead of with the reference.
  static func compare(
    _ stores: [Store], urls: [String], with expected: [String: [Value: [Value]]],
    undecided: Set<String> = [], agreementOnly: Bool = false
  )
    async throws
    -> String?
  {
    func decided(_ rows: [String: [Value: [Value]]]) -> [String: [Value: [Value]]] {
      if undecided.isEmpty { return rows }
      var result: [String: [Value: [Value]]] = [:]
      for (entity, byID) in rows {
        result[entity] = byID.filter { !undecided.contains(SyncRowState.key(entity: entity, id: $0.key)) }
      }
      return result
    }
    var firstDigest: StoreDigest?
    var firstRows: [String: [Value: [Value]]]?
    for (index, store) in stores.enumerated() {
      let rows = try await Self.snapshot(store)
      if agreementOnly {
        if let firstRows, rows != firstRows {
          return "replica r\(index) differs from r0: " + ReferenceMerge.difference(rows, firstRows)
        }
        firstRows = rows
      } else if decided(rows) != decided(expected) {
        return
          "replica r\(index) (\(urls[index].prefix(while: { $0 != ":" }))) differs from the reference merge: "
          + ReferenceMerge.difference(decided(rows), decided(expected))
      }
      let digest = try await store.digest(entities: Self.schemas.map(\.name))
      if let firstDigest, firstDigest != digest {
        return "replica r\(index) has another digest than r0: \(digest.differences(from: firstDigest))"
      }
      firstDigest = digest
    }
    return nil
  }

  /// What the first two replicas of a genesis schedule hold before they first take part in
  /// sync: items (some ids on both), a label each, and pins that refer to them, two of them (one
  /// on each replica) with the same unique slot.
  static func presync(replica: Int) -> ChangeSet? {
    guard replica < 2 else { return nil }
    let base = Int64(replica * 4)
    let label = Value.string("l\(replica)")
    var operations: [ChangeSet.Operation] = (base..<(base + 6)).map { id in
      .insert(
        entity: "Item",
        row: Row(
          [.int(id), .string("g\(replica)"), .int(id * 10), .double(1.5), .bool(replica == 0)]
            + Array(repeating: Value.null, count: 4)))
    }
    operations.append(.insert(entity: "Label", row: Row([label, .string("c\(replica)")])))
    operations.append(
      .insert(
        entity: "Pin", row: Row([.int(Int64(20 + replica)), .int(base), label, .null, .int(1), .string("g")]))
    )
    operations.append(
      .insert(
        entity: "Pin",
        row: Row([.int(Int64(30 + replica)), .int(base + 1), .null, label, .null, .string("k")])))
    return ChangeSet(operations)
  }

  /// The rows among `rows` a replica stores without a sync state of their own (they have the
  /// implicit genesis state), by entity and id.
  static func implicitRows(of replica: SyncReplica, among rows: [String: [Value: [Value]]]) async throws
    -> Set<String>
  {
    guard try await replica.genesisStamp() != nil else { return [] }
    var keys: [String] = []
    for (entity, byID) in rows { keys += byID.keys.map { SyncRowState.key(entity: entity, id: $0) } }
    let known = try await replica.syncStates(keys)
    return Set(keys.filter { known[$0] == nil })
  }

  /// The rows a write names by id (inserted, updated or upserted), by entity and id.
  static func named(by write: ChangeSet) -> Set<String> {
    var keys: Set<String> = []
    for operation in write.operations {
      switch operation {
      case .insert(let entity, let row), .update(let entity, let row), .upsert(let entity, let row):
        guard let schema = schemas.first(where: { $0.name == entity }) else { continue }
        keys.insert(SyncRowState.key(entity: entity, id: row[schema.idPosition]))
      default: continue
      }
    }
    return keys
  }

  /// A wall clock for tests: one microsecond later at every reading, so no two readings tie.
  static func tickingWall() -> @Sendable () -> Int64 {
    let wall = TickingWall()
    return {
      wall.now.withLock {
        $0 += 1
        return $0
      }
    }
  }

  /// New stores on one backend, one per name, each with these entities prepared.
  static func openStores(
    _ backend: String, names: [String], in folder: TemporaryFolder, schemas: [EntitySchema]
  )
    async throws -> [Store]
  {
    var stores: [Store] = []
    for name in names {
      guard
        let url = storeURL(
          backend, folder: folder, name: name, postgresURL: TestServers.postgresURL,
          tag: UInt64.random(in: 0...999_999))
      else {
        throw CofferError(.invalidConfiguration, "No store for backend '\(backend)' here.")
      }
      let store = try await Store.open(url: url, registry: .builtIn)
      try await store.prepare(schemas: schemas)
      stores.append(store)
    }
    return stores
  }

  /// The URL of a new store on a backend, `nil` for PostgreSQL without a server.
  static func storeURL(
    _ backend: String, folder: TemporaryFolder, name: String, postgresURL: String?, tag: UInt64
  )
    -> String?
  {
    switch backend {
    case "memory": return "memory:sync-\(name)-\(tag)-\(UUID().uuidString)"
    case "sqlite": return "sqlite://\(folder.file("\(name).sqlite"))"
    case "lmdb": return "lmdb://\(folder.file(name))"
    case "plist": return "plist://\(folder.file("\(name).plist"))?format=binary"
    case "postgres":
      guard let postgresURL else { return nil }
      return postgresStore(postgresURL, schema: "sync_\(tag)_\(name)_\(UInt32.random(in: 0...UInt32.max))")
    default: return nil
    }
  }

  static func postgresStore(_ url: String, schema: String) -> String {
    url + (url.contains("?") ? "&" : "?") + "schema=\(schema)"
  }

  /// Every app row of a store, by entity and id.
  static func snapshot(_ store: Store) async throws -> [String: [Value: [Value]]] {
    var result: [String: [Value: [Value]]] = [:]
    for schema in schemas {
      var rows: [Value: [Value]] = [:]
      for row in try await store.fetchRows(Query(entity: schema.name)) {
        rows[row[schema.idPosition]] = row.values
      }
      result[schema.name] = rows
    }
    return result
  }

  /// A random write, built from what the replica holds.
  static func write(kind: Int, pick: UInt64, salt: UInt64, existing: [String: [Value: [Value]]]) -> ChangeSet
  {
    var random = SeededGenerator(seed: salt)
    let items = (existing["Item"] ?? [:]).keys.sorted { "\($0)" < "\($1)" }
    let labels = (existing["Label"] ?? [:]).keys.sorted { "\($0)" < "\($1)" }
    func item(_ id: Value, base: [Value]?) -> Row {
      var values = base ?? [id, .string("t\(salt % 1000)")] + Array(repeating: Value.null, count: 7)
      let fields = base == nil ? UInt64.max : random.next()
      for position in 1..<9 where fields & (1 << UInt64(position)) != 0 {
        values[position] = randomValue(position, &random)
      }
      if values[1].isNull { values[1] = .string("t") }
      return Row(values)
    }
    func label(_ name: Value) -> Row {
      Row([name, Bool.random(using: &random) ? .string("c\(random.next() % 50)") : .null])
    }
    /// A pin: a new one with every field, or some fields of an existing one changed; it refers
    /// to rows the replica holds (or none), so the local write keeps references whole.
    func pin(_ id: Value, base: [Value]?) -> Row {
      var values = base ?? [id, .null, .null, .null, .null, .string("n")]
      let fields = base == nil ? UInt64.max : random.next()
      func some(_ ids: [Value]) -> Value {
        ids.isEmpty || random.next() % 4 == 0 ? .null : ids[Int(random.next() % UInt64(ids.count))]
      }
      if fields & 2 != 0 { values[1] = some(items) }
      if fields & 4 != 0 { values[2] = some(labels) }
      if fields & 8 != 0 { values[3] = random.next() % 3 == 0 ? some(labels) : .null }
      if fields & 16 != 0 { values[4] = random.next() % 4 == 0 ? .null : .int(Int64(random.next() % 4)) }
      if fields & 32 != 0 { values[5] = .string("n\(random.next() % 100)") }
      return Row(values)
    }
    let newItem = Value.int(Int64(pick % 24))
    let someItem: Value? = items.isEmpty ? Value?.none : items[Int(pick % UInt64(items.count))]
    switch kind {
    case 0, 1:
      if let base = existing["Item"]?[newItem] {
        return ChangeSet([.update(entity: "Item", row: item(newItem, base: base))])
      }
      return ChangeSet([.insert(entity: "Item", row: item(newItem, base: nil))])
    case 2, 3:
      guard let someItem else { return ChangeSet([.insert(entity: "Item", row: item(newItem, base: nil))]) }
      return ChangeSet([.update(entity: "Item", row: item(someItem, base: existing["Item"]?[someItem]))])
    case 4: return ChangeSet([.upsert(entity: "Item", row: item(newItem, base: nil))])
    case 5:
      guard let someItem else { return ChangeSet() }
      return ChangeSet([.delete(entity: "Item", id: someItem)])
    case 6:
      return ChangeSet([
        .deleteMatching(
          entity: "Item", filter: .compare(field: "count", op: .greater, value: .int(Int64(pick % 90))))
      ])
    case 7: return ChangeSet([.upsert(entity: "Label", row: label(.string("l\(pick % 8)")))])
    case 10, 11:
      return ChangeSet([
        .upsert(
          entity: "Pin", row: pin(.int(Int64(pick % 10)), base: existing["Pin"]?[.int(Int64(pick % 10))]))
      ])
    case 12:
      let pins = (existing["Pin"] ?? [:]).keys.sorted { "\($0)" < "\($1)" }
      guard !pins.isEmpty else { return ChangeSet() }
      return ChangeSet([.delete(entity: "Pin", id: pins[Int(pick % UInt64(pins.count))])])
    case 8:
      guard !labels.isEmpty else {
        return ChangeSet([.upsert(entity: "Label", row: label(.string("l\(pick % 8)")))])
      }
      return ChangeSet([.delete(entity: "Label", id: labels[Int(pick % UInt64(labels.count))])])
    default:
      var operations: [ChangeSet.Operation] = [.upsert(entity: "Item", row: item(newItem, base: nil))]
      if let someItem, someItem != newItem { operations.append(.delete(entity: "Item", id: someItem)) }
      operations.append(.upsert(entity: "Label", row: label(.string("l\((pick / 7) % 8)"))))
      return ChangeSet(operations)
    }
  }

  static func randomValue(_ position: Int, _ random: inout SeededGenerator) -> Value {
    if position > 1 && random.next() % 5 == 0 { return .null }
    switch position {
    case 1:
      return .string(["milk", "", "Ünïcode ✓", "a%_*", "x\(random.next() % 100)"][Int(random.next() % 5)])
    case 2: return .int([Int64.min, Int64.max, 0, Int64(random.next() % 100)][Int(random.next() % 4)])
    case 3: return .double([1.5, -2.25, .infinity, Double(random.next() % 1000) / 8][Int(random.next() % 4)])
    case 4: return .bool(random.next() % 2 == 0)
    case 5: return .date(Value.date(microsecondsSince1970: Int64(random.next() % 4_000_000_000_000_000)))
    case 6: return .bytes(Data((0..<Int(random.next() % 6)).map { _ in UInt8(random.next() % 256) }))
    case 7:
      var generator = random
      let uuid = UUID(
        uuid: (
          UInt8(generator.next() % 256), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
          UInt8(generator.next() % 256)
        ))
      random = generator
      return .uuid(uuid)
    default: return .document(Data("{\"n\":\(random.next() % 10)}".utf8))
    }
  }
}

/// The independent merge: every write as the fields it changed on its replica and the rows it
/// removed there, in the order they were made; per field the last write wins, a row is there
/// when some field was written after its last delete.
struct ReferenceMerge {
  struct Cell { var value: Value; var time: Int64 }
  var fields: [String: [Value: [Int: Cell]]] = [:]
  var deleted: [String: [Value: Int64]] = [:]
  /// Rows (by sync key) a replica deleted while they had the implicit genesis state there, and
  /// when: their values on that replica went with them, so which values such a row shows if it
  /// comes back depends on what had reached other replicas before the delete (documented).
  var uncertain: [String: Int64] = [:]

  ///
  /// A row in `whole` (it had the implicit genesis state on its replica, keyed as sync keys
  /// rows) that the write changed or named (`named`) counts as written whole, every field: the
  /// documented outcome of the first change of such a row.
  mutating func record(
    before: [String: [Value: [Value]]], after: [String: [Value: [Value]]], time: Int64,
    whole: Set<String> = [],
    named: Set<String> = []
  ) {
    for (entity, rows) in after {
      for (id, values) in rows {
        var old = before[entity]?[id]
        let key = SyncRowState.key(entity: entity, id: id)
        if old != nil, whole.contains(key), named.contains(key) || old != values { old = nil }
        for (position, value) in values.enumerated() where old == nil || old?[position] != value {
          fields[entity, default: [:]][id, default: [:]][position] = Cell(value: value, time: time)
        }
      }
    }
    for (entity, rows) in before {
      for id in rows.keys where after[entity]?[id] == nil {
        deleted[entity, default: [:]][id] = time
        let key = SyncRowState.key(entity: entity, id: id)
        if whole.contains(key) { uncertain[key] = time }
      }
    }
  }

  /// The rows whose values the writes do not decide (see ``uncertain``): deleted while they had
  /// the implicit genesis state, with some field not written again since. Whether any is a pin
  /// (whose unique slot and references decide other rows' outcomes) is returned too.
  func undecided() -> (keys: Set<String>, pins: Bool) {
    var keys: Set<String> = []
    for schema in ConvergenceChecker.schemas {
      for (id, cells) in fields[schema.name] ?? [:] {
        let key = SyncRowState.key(entity: schema.name, id: id)
        guard let since = uncertain[key] else { continue }
        let rewritten = schema.fields.indices.allSatisfy { (cells[$0]?.time ?? Int64.min) > since }
        if !rewritten { keys.insert(key) }
      }
    }
    return (keys, keys.contains { $0.hasPrefix("Pin\u{1F}") })
  }

  /// The rows the writes give: per field the last write's value, a row there when some field was
  /// written after its last delete; then, of the rows sharing a unique value, the one whose
  /// value was written first; then only rows whose cascade and deny references name a row that is
  /// there (again until nothing changes), and a nullify reference to a row not there read as null.
  ///
  /// With `subscriptions` (a partial replica's), only the rows whose merged values (also a
  /// deleted row's last ones) some subscription's filter matches, as the core evaluates filters,
  /// take part: the unique and reference rules then see only those.
  func rows(keeping subscriptions: [SyncSubscription]? = nil) throws -> [String: [Value: [Value]]] {
    var result: [String: [Value: [Value]]] = [:]
    for schema in ConvergenceChecker.schemas {
      let filters = try (subscriptions ?? []).filter { $0.entity == schema.name }.map {
        try CompiledFilter($0.filter, schema: schema)
      }
      var rows: [Value: [Value]] = [:]
      var firsts: [[Value]: (time: Int64, id: Value)] = [:]
      var losers: Set<Value> = []
      for (id, cells) in (fields[schema.name] ?? [:]).sorted(by: { "\($0.key)" < "\($1.key)" }) {
        let last = cells.values.map(\.time).max() ?? 0
        let values = schema.fields.indices.map { cells[$0]?.value ?? .null }
        if subscriptions != nil, !filters.contains(where: { $0.matches(Row(values)) }) { continue }
        if let gone = deleted[schema.name]?[id], gone > last { continue }
        rows[id] = values
        for index in schema.uniqueIndexes {
          let positions = index.fields.compactMap { schema.position(of: $0) }
          let claim = positions.map { values[$0] }
          if claim.contains(where: \.isNull) { continue }
          let time = positions.compactMap { cells[$0]?.time }.max() ?? 0
          if let first = firsts[claim], first.time < time {
            losers.insert(id)
          } else {
            if let first = firsts[claim] { losers.insert(first.id) }
            firsts[claim] = (time, id)
          }
        }
      }
      for id in losers { rows[id] = nil }
      result[schema.name] = rows
    }
    var changed = true
    while changed {
      changed = false
      for schema in ConvergenceChecker.schemas {
        for (id, values) in result[schema.name] ?? [:] {
          for reference in schema.references where reference.onDelete != .nullify {
            guard let position = schema.position(of: reference.field), !values[position].isNull,
              result[reference.entity]?[values[position]] == nil
            else { continue }
            result[schema.name]?[id] = nil
            changed = true
            break
          }
        }
      }
    }
    for schema in ConvergenceChecker.schemas {
      for (id, values) in result[schema.name] ?? [:] {
        var shown = values
        for reference in schema.references where reference.onDelete == .nullify {
          guard let position = schema.position(of: reference.field), !values[position].isNull,
            result[reference.entity]?[values[position]] == nil
          else { continue }
          shown[position] = .null
        }
        result[schema.name]?[id] = shown
      }
    }
    return result
  }

  static func difference(_ actual: [String: [Value: [Value]]], _ expected: [String: [Value: [Value]]])
    -> String
  {
    var notes: [String] = []
    for entity in Set(actual.keys).union(expected.keys).sorted() {
      let a = actual[entity] ?? [:]
      let e = expected[entity] ?? [:]
      for id in Set(a.keys).union(e.keys).sorted(by: { "\($0)" < "\($1)" }) where a[id] != e[id] {
        notes.append(
          "\(entity) \(id): \(a[id].map { "\($0)" } ?? "absent") but the merge gives \(e[id].map { "\($0)" } ?? "absent")"
        )
      }
    }
    return notes.prefix(5).joined(separator: "; ")
  }
}

/// Counts the pages a bootstrap step delivered, to cut it off.
actor BootstrapPages {
  /// Thrown to cut a bootstrap off.
  struct Cut: Error {}
  private var count = 0

  /// The number of this page, from 0.
  func next() -> Int {
    count += 1
    return count - 1
  }
}
