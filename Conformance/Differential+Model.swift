@_spi(Backend) import Coffer
import Foundation

/// One step of a differential run.
enum DifferentialStep: Sendable, Hashable {
  /// Prepares entities (the first step, or a schema evolution that may be expected to fail).
  case prepare([EntitySchema])
  /// Applies a batch through ``Store/apply(_:)``.
  case apply([ChangeSet.Operation])
  /// Inserts rows through the SPI's bulk path, ``StorageBackend/insert(into:count:row:)``, each
  /// row checked as it is asked for, the way ``Store/insert(_:)-([T])`` does.
  case bulkInsert(entity: String, rows: [Row])
  case fetch(Query)
  case count(Query)
  case get(entity: String, ids: [Value])
  /// Closes the store and opens its location again, preparing the entities as they stand; on a
  /// target that is not reopenable, nothing.
  case reopen
  /// Prepares `schema` while a batch shaped for the schema prepared before runs on the same store.
  case race(schema: EntitySchema, batch: [ChangeSet.Operation])
  /// Computes an aggregate through the row API, ``Store/aggregateRows(_:)``.
  case aggregate(Aggregation)
}

/// Which kinds of step a run makes. Each can be left out (`COFFER_DIFFERENTIAL_EXCLUDE`, a
/// comma-separated list of these names) to look past a known defect; the committed check makes
/// them all.
struct DifferentialFeatures: Sendable, Hashable {
  static let all: Set<String> = [
    "reopen", "evolve", "unique-evolution", "race", "bulk", "bulk-invalid", "deep-filter", "huge-limit",
    "cross-entity", "huge-values", "aggregate",
  ]
  var enabled: Set<String>

  func has(_ name: String) -> Bool { enabled.contains(name) }

  /// Every feature the capabilities allow, less the excluded ones.
  static func allowed(by capabilities: CheckRequirements, excluding excluded: Set<String>) -> Self {
    var enabled = all.subtracting(excluded)
    if !capabilities.contains(.reopenable) { enabled.remove("reopen") }
    if !capabilities.contains(.schemaEvolution) {
      for name in ["evolve", "unique-evolution", "race"] { enabled.remove(name) }
    }
    if !capabilities.contains(.crossEntityTransactions) { enabled.remove("cross-entity") }
    return Self(enabled: enabled)
  }

  /// The features `COFFER_DIFFERENTIAL_EXCLUDE` names.
  static func excludedByEnvironment() -> Set<String> {
    let text = ProcessInfo.processInfo.environment["COFFER_DIFFERENTIAL_EXCLUDE"] ?? ""
    return Set(
      text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
  }
}

/// Random entity schemas: every field kind, optional fields and defaults, ids of every kind in
/// any position, unique (single and multi-field) and plain indexes, hostile names.
enum DifferentialSchemas {
  static func entities(_ random: inout SplitMix64) -> [EntitySchema] {
    var names: Set<String> = []
    return (0..<(1 + random.below(3))).map { _ in
      var name = random.pick(DifferentialValues.names)
      while names.contains(name) { name += random.pick(DifferentialValues.names) }
      names.insert(name)
      return entity(name, &random)
    }
  }

  static func entity(_ name: String, _ random: inout SplitMix64) -> EntitySchema {
    let idKind = random.pick([FieldKind.int, .string, .uuid])
    var used: Set<String> = []
    var fields: [Field] = []
    for _ in 0..<random.below(6) {
      fields.append(field(avoiding: &used, &random))
    }
    let idName = fresh(avoiding: &used, &random)
    fields.insert(Field(idName, idKind), at: random.below(fields.count + 1))
    let indexable = fields.filter { $0.kind != .document && $0.name != idName }.map(\.name)
    var indexes: [Index] = []
    if !indexable.isEmpty {
      for _ in 0..<random.below(3) {
        var chosen: [String] = []
        for _ in 0..<(1 + random.below(min(3, indexable.count))) {
          let next = random.pick(indexable)
          if !chosen.contains(next) { chosen.append(next) }
        }
        indexes.append(Index(chosen, isUnique: random.chance(55)))
      }
    }
    return (try? EntitySchema(name: name, fields: fields, idField: idName, indexes: indexes))
      ?? fallback(name)
  }

  /// A new non-id field: any kind, often optional, sometimes with a default.
  static func field(avoiding used: inout Set<String>, _ random: inout SplitMix64) -> Field {
    let kind = random.pick(FieldKind.allCases)
    let optional = random.chance(55)
    // Mostly no default; sometimes one of the kind; rarely an explicit null (which the core accepts).
    // (Spelled out: `Value` is `ExpressibleByNilLiteral`, so a bare `nil` here could mean `.null`.)
    let roll = random.below(100)
    let fallback: Value?
    if roll < 30 {
      fallback = .some(random.pick(DifferentialValues.pool(kind, key: true)))
    } else if roll < 32 {
      fallback = .some(.null)
    } else {
      fallback = .none
    }
    return Field(fresh(avoiding: &used, &random), kind, isOptional: optional, default: fallback)
  }

  static func fresh(avoiding used: inout Set<String>, _ random: inout SplitMix64) -> String {
    var name = random.pick(DifferentialValues.names)
    while used.contains(name) { name += random.pick(DifferentialValues.names) }
    used.insert(name)
    return name
  }

  static func fallback(_ name: String) -> EntitySchema {
    // Always well formed: one int id.
    (try? EntitySchema(name: name, fields: [Field("id", .int)], idField: "id"))
      ?? { preconditionFailure("a one-field schema is well formed") }()
  }

  /// A changed schema for an entity: a field added (optional, with a default, or required with
  /// none — which must fail), dropped, moved, made optional or required, or of another kind (which
  /// must fail), or an index added or dropped.
  ///
  /// Only fields in `indexable` get a new index: LMDB keys hold at most 511 bytes, a documented
  /// limit, so fields that hold longer values are not indexed.
  static func evolved(
    _ schema: EntitySchema, _ random: inout SplitMix64, features: DifferentialFeatures,
    indexable canIndex: (String) -> Bool = { _ in true }
  ) -> EntitySchema {
    var fields = schema.fields
    var indexes = schema.indexes
    var used = Set(fields.map(\.name))
    let others = fields.indices.filter { $0 != schema.idPosition }
    switch random.below(100) {
    case 0..<22:
      var field = field(avoiding: &used, &random)
      field.isOptional = true
      fields.insert(field, at: random.below(fields.count + 1))
    case 22..<40:
      var field = field(avoiding: &used, &random)
      field.isOptional = random.chance(30)
      field.defaultValue = random.pick(DifferentialValues.small(field.kind))
      fields.insert(field, at: random.below(fields.count + 1))
      if features.has("unique-evolution") && field.kind != .document && random.chance(40) {
        indexes.append(Index([field.name], isUnique: true))
      }
    case 40..<46:
      var field = field(avoiding: &used, &random)
      field.isOptional = false
      field.defaultValue = .none
      fields.append(field)
    case 46..<62 where !others.isEmpty:
      let dropped = fields.remove(at: random.pick(others)).name
      indexes.removeAll { $0.fields.contains(dropped) }
    case 62..<68 where fields.count > 1:
      let moved = fields.remove(at: random.below(fields.count))
      fields.insert(moved, at: random.below(fields.count + 1))
    case 68..<76 where !others.isEmpty:
      let position = random.pick(others)
      fields[position].isOptional.toggle()
      if random.chance(50) {
        fields[position].defaultValue = random.pick(DifferentialValues.small(fields[position].kind))
      }
    case 76..<84 where !others.isEmpty:
      let position = random.pick(others)
      let kind = random.pick(FieldKind.allCases.filter { $0 != fields[position].kind })
      fields[position].kind = kind
      fields[position].defaultValue = .none
      indexes.removeAll { $0.fields.contains(fields[position].name) && kind == .document }
    case 84..<94 where features.has("unique-evolution"):
      let indexable = fields.filter {
        $0.kind != .document && $0.name != schema.idField.name && canIndex($0.name)
      }
      .map(\.name)
      if let first = indexable.first {
        let second = random.pick(indexable)
        let chosen = random.chance(50) || second == first ? [random.pick(indexable)] : [first, second]
        indexes.append(Index(chosen, isUnique: random.chance(70)))
      }
    default:
      if !indexes.isEmpty { indexes.remove(at: random.below(indexes.count)) }
    }
    return
      (try? EntitySchema(
        name: schema.name, fields: fields, idField: schema.idField.name, indexes: indexes)) ?? schema
  }
}
