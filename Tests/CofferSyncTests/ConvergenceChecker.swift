@_spi(Backend) import Coffer
import CofferStores
import CofferSync
import CofferTestSupport
import Foundation
import Synchronization

/// A seeded random generator (SplitMix64): the same seed gives the same schedule.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

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

  var description: String {
    switch self {
    case .write(let replica, let kind, let pick, let salt):
      "write(r\(replica), kind \(kind), pick \(pick), salt \(salt))"
    case .send(let from, let to, let fate): "send(r\(from)→r\(to), fate \(fate))"
    case .deliver(let from, let to, let pick, let ackFate):
      "deliver(r\(from)→r\(to), pick \(pick), ack \(ackFate))"
    case .restart(let replica): "restart(r\(replica))"
    }
  }
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
  static let schemas = [item, label]

  /// The backends replicas are made on, in turn.
  var backends: [String]
  var postgresURL: String?

  /// A random schedule for a seed.
  static func schedule(seed: UInt64, replicas: Int, length: Int) -> [SyncStep] {
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
            replica: a, kind: Int.random(in: 0..<10, using: &random), pick: random.next(), salt: random.next()
          ))
      case 35..<65: steps.append(.send(from: a, to: b, fate: Int.random(in: 0..<10, using: &random)))
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
    let wall = Mutex<Int64>(1_800_000_000_000_000)
    let tick: @Sendable () -> Int64 = {
      wall.withLock {
        $0 += 1; return $0
      }
    }
    let urls = places.urls
    var stores: [Store] = []
    var replicas: [SyncReplica] = []
    for index in urls.indices {
      let store = try await places.open(index, schemas: Self.schemas)
      stores.append(store)
      replicas.append(SyncReplica(store: store, wall: tick))
    }
    var ids: [String] = []
    for replica in replicas { ids.append(try await replica.replicaID()) }
    var reference = ReferenceMerge()
    var inFlight: [Int: [SyncMessage]] = [:]
    var believed: [Int: ChangePosition?] = [:]
    func link(_ from: Int, _ to: Int) -> Int { from * 16 + to }

    for step in steps {
      switch step {
      case .write(let r, let kind, let pick, let salt):
        guard r < stores.count else { continue }
        let before = try await Self.snapshot(stores[r])
        let write = Self.write(kind: kind, pick: pick, salt: salt, existing: before)
        do {
          try await stores[r].apply(write)
        } catch let error as CofferError where error.code == .duplicateID || error.code == .notFound {
          continue
        }
        let after = try await Self.snapshot(stores[r])
        counts.writes += 1
        reference.record(before: before, after: after, time: tick())
        try await replicas[r].stamp()
      case .send(let from, let to, let fate):
        guard from < stores.count, to < stores.count else { continue }
        let after = believed[link(from, to)] ?? nil
        let message = try await replicas[from].message(after: after)
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
        replicas[r] = SyncReplica(store: stores[r], wall: tick)
      }
    }
    // Quiescence: every link delivers reliably until no message carries anything new.
    var rounds = 0
    while true {
      rounds += 1
      var moved = false
      for from in replicas.indices {
        for to in replicas.indices where from != to {
          while true {
            let message = try await replicas[from].message(
              after: try await replicas[to].position(of: ids[from]))
            if message.isEmpty { break }
            if case .merged(let n) = try await replicas[to].receive(message), n > 0 { moved = true }
          }
        }
      }
      if !moved { break }
      if rounds > 20 { return "no quiescence after 20 rounds of reliable delivery" }
    }
    let expected = reference.rows()
    counts.rows = expected.values.reduce(0) { $0 + $1.count }
    var firstDigest: StoreDigest?
    for (index, store) in stores.enumerated() {
      let rows = try await Self.snapshot(store)
      if rows != expected {
        return
          "replica r\(index) (\(urls[index].prefix(while: { $0 != ":" }))) differs from the reference merge: "
          + ReferenceMerge.difference(rows, expected)
      }
      let digest = try await store.digest(entities: Self.schemas.map(\.name))
      if let firstDigest, firstDigest != digest {
        return "replica r\(index) has another digest than r0: \(digest.differences(from: firstDigest))"
      }
      firstDigest = digest
    }
    return nil
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

  mutating func record(before: [String: [Value: [Value]]], after: [String: [Value: [Value]]], time: Int64) {
    for (entity, rows) in after {
      for (id, values) in rows {
        let old = before[entity]?[id]
        for (position, value) in values.enumerated() where old == nil || old?[position] != value {
          fields[entity, default: [:]][id, default: [:]][position] = Cell(value: value, time: time)
        }
      }
    }
    for (entity, rows) in before {
      for id in rows.keys where after[entity]?[id] == nil { deleted[entity, default: [:]][id] = time }
    }
  }

  func rows() -> [String: [Value: [Value]]] {
    var result: [String: [Value: [Value]]] = [:]
    for schema in ConvergenceChecker.schemas {
      var rows: [Value: [Value]] = [:]
      for (id, cells) in fields[schema.name] ?? [:] {
        let last = cells.values.map(\.time).max() ?? 0
        if let gone = deleted[schema.name]?[id], gone > last { continue }
        rows[id] = schema.fields.indices.map { cells[$0]?.value ?? .null }
      }
      result[schema.name] = rows
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
