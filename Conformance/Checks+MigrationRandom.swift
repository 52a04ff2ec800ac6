@_spi(Backend) import Coffer
import Foundation

/// A random entity, random rows and a random plan of built-in steps, made together so that each
/// step is valid for the schema the steps before it leave (a step may still fail on the rows:
/// a conversion, a unique index).
private struct RandomMigration {
  var schema: EntitySchema
  var rows: [Row]
  var plan: MigrationPlan

  init(round: Int, random: inout SplitMix64) throws {
    var names = 0
    func freshName(_ prefix: String) -> String {
      names += 1
      return "\(prefix)\(names)"
    }
    let kinds: [FieldKind] = [.int, .string, .double, .bool]
    var fields = [Field("id", random.chance(50) ? .int : .string)]
    for _ in 0..<(2 + random.below(4)) {
      fields.append(Field(freshName("f"), random.pick(kinds), isOptional: random.chance(40)))
    }
    var indexes: [Index] = []
    if random.chance(50) { indexes.append(Index([fields[1 + random.below(fields.count - 1)].name])) }
    schema = try EntitySchema(name: "Random\(round)", fields: fields, idField: "id", indexes: indexes)

    rows = (0..<random.below(40)).map { n in
      Row(
        fields.enumerated().map { position, field in
          if position == 0 { return field.kind == .int ? .int(Int64(n) * 3 - 20) : .string("k\(n)") }
          if field.isOptional && random.chance(25) { return .null }
          return Self.value(of: field.kind, &random)
        })
    }

    // The plan, over a model of the schema each step leaves.
    var entity = schema.name
    var current = fields
    var currentIndexes = indexes
    var steps: [MigrationStep] = []
    for number in 0..<(1 + random.below(4)) {
      let name = "r\(round)-s\(number)"
      let others = Array(current.indices.dropFirst())
      switch random.below(8) {
      case 0:
        let position = random.below(current.count)
        let new = freshName("g")
        steps.append(.renameField(name, entity: entity, from: current[position].name, to: new))
        let old = current[position].name
        currentIndexes = currentIndexes.map {
          Index($0.fields.map { $0 == old ? new : $0 }, isUnique: $0.isUnique)
        }
        current[position].name = new
      case 1:
        guard let position = others.isEmpty ? nil : random.pick(others) else { continue }
        let field = current[position]
        let choices: [(FieldKind, FieldConversion)] =
          switch field.kind {
          case .int: [(.string, .intToString), (.double, .intToDouble), (.bool, .intToBool)]
          case .double: [(.string, .doubleToString), (.int, .doubleToInt)]
          case .bool: [(.int, .boolToInt)]
          case .string: [(.int, .stringToInt)]
          default: []
          }
        guard !choices.isEmpty else { continue }
        let (kind, conversion) = random.pick(choices)
        steps.append(.changeKind(name, entity: entity, field: field.name, to: kind, using: conversion))
        current[position] = Field(field.name, kind, isOptional: field.isOptional)
      case 2:
        let field = Field(freshName("c"), .int)
        steps.append(
          .addField(name, entity: entity, field) { record in
            .int(Int64(record.attributes.count))
          })
        current.append(field)
      case 3:
        guard let position = others.isEmpty ? nil : random.pick(others) else { continue }
        let removed = current[position].name
        steps.append(.removeField(name, entity: entity, field: removed))
        current.remove(at: position)
        currentIndexes.removeAll { $0.fields.contains(removed) }
      case 4, 5:
        guard let position = others.isEmpty ? nil : random.pick(others) else { continue }
        let fieldName = current[position].name
        guard !currentIndexes.contains(where: { $0.fields == [fieldName] }) else { continue }
        let index = Index([fieldName], isUnique: random.chance(50))
        steps.append(.addIndex(name, entity: entity, index))
        currentIndexes.append(index)
      case 6:
        guard let index = currentIndexes.isEmpty ? nil : random.pick(currentIndexes) else { continue }
        steps.append(.dropIndex(name, entity: entity, fields: index.fields))
        currentIndexes.removeAll { $0.fields == index.fields }
      default:
        let new = "Renamed\(round)-\(number)"
        steps.append(.renameEntity(name, from: entity, to: new))
        entity = new
      }
    }
    plan = MigrationPlan(steps)
  }

  /// A value from a small domain, so that unique indexes clash and conversions fail now and
  /// then: digits and words for strings, whole and fractional doubles.
  static func value(of kind: FieldKind, _ random: inout SplitMix64) -> Value {
    switch kind {
    case .int: .int(Int64(random.below(12)) - 3)
    case .double: .double(random.pick([0.0, 1.0, 2.5, -3.0, 7.0, 1e300, 0.125]))
    case .bool: .bool(random.chance(50))
    default: .string(random.pick(["1", "42", "-7", "x", "Ω", "00", "", "word"]))
    }
  }
}

extension ConformanceSuite {
  static let randomMigrationChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "migration.random-plans-match-reference", requires: .migrations,
      "Random schemas, rows and plans of built-in steps give, on the backend, the outcome of every step, the "
        + "rows touched and the digest of the data that the in-memory reference (a rehearsal) gives."
    ) { context in
      var random = SplitMix64(seed: differentialSeed() ^ 0x4D49_4752_4154_4531)
      for round in 0..<10 {
        let fixture = try RandomMigration(round: round, random: &random)
        let store = try await context.store()
        try await store.prepare(schemas: [fixture.schema])
        if !fixture.rows.isEmpty {
          try await store.apply(
            ChangeSet([.insertMany(entity: fixture.schema.name, rows: RowSource(fixture.rows))]))
        }
        let what = "round \(round) (steps \(fixture.plan.steps.map(\.summary).joined(separator: "; ")))"
        let expected = try await store.rehearseMigration(fixture.plan)
        var outcomes: [MigrationReport.Step.Outcome] = []
        var touched: [Int] = []
        do {
          let report = try await store.migrate(fixture.plan)
          outcomes = report.steps.map(\.outcome)
          touched = report.steps.map(\.rowsTouched)
        } catch let error as CofferError {
          let record = try await store.migrations()
          outcomes = fixture.plan.steps.indices.map { position in
            position < record.count
              ? .applied : position == record.count ? .failed(code: error.code.name, message: "") : .notRun
          }
          touched = fixture.plan.steps.indices.map { $0 < record.count ? record[$0].rowsTouched : 0 }
        }
        let expectedOutcomes = expected.steps.map { step -> MigrationReport.Step.Outcome in
          if case .failed(let code, _) = step.outcome { return .failed(code: code, message: "") }
          return step.outcome
        }
        try expectEqual(outcomes, expectedOutcomes, "\(what): outcomes")
        try expectEqual(touched, expected.steps.map(\.rowsTouched), "\(what): rows touched")
        try expectEqual(try await store.digest(), expected.digest, "\(what): digest")
      }
    }
  ]
}
