@_spi(Backend) import Coffer

/// Codes of 5,000 rows, a unique field: more rows than a backend is likely to write in one go.
private let codes: EntitySchema = {
  do {
    return try EntitySchema(
      name: "Code", fields: [Field("id", .int), Field("code", .string), Field("uses", .int)], idField: "id",
      indexes: [Index(["code"], isUnique: true)])
  } catch {
    preconditionFailure("The fixture schema is invalid: \(error)")
  }
}()

private let codeCount: Int64 = 5_000

/// A store holding the codes `c1` … `c5000`.
private func codeStore(_ context: CheckContext) async throws -> Store {
  let store = try await context.store()
  try await store.prepare(schemas: [codes])
  try await store.apply(
    ChangeSet([
      .insertMany(
        entity: "Code",
        rows: RowSource(count: Int(codeCount)) { Row([.int(Int64($0 + 1)), .string("c\($0 + 1)"), .int(0)]) })
    ]))
  return store
}

/// A step rewriting every code, with `change` applied to each new row.
private func rewriting(_ name: String, _ change: @escaping @Sendable (inout [String: Value]) -> Void)
  -> MigrationStep
{
  .custom(name) { context in
    let entity = try DynamicEntity(schema: codes)
    try context.rewrite("Code", as: codes) { record in
      var attributes = record.attributes
      attributes["uses"] = .int(1)
      change(&attributes)
      return try DynamicRecord(entity, attributes: attributes)
    }
  }
}

extension ConformanceSuite {
  static let migrationRewriteChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "migration.rewrite-many-rows", requires: .migrations,
      "A custom step rewriting 5,000 rows stores every one of them; when two of its rows share a unique value or "
        + "an id, it fails with migrationFailed naming the entity and one of the two, and changes nothing."
    ) { context in
      let store = try await codeStore(context)
      let digest = try await store.digest()
      let clash = try await expectMigrationFailure("two rows given one code") {
        try await store.migrate(
          MigrationPlan([
            rewriting("same-code") { attributes in
              if attributes["id"] == .int(4_999) { attributes["code"] = .string("c5000") }
            }
          ]))
      }
      try expectEqual(clash.entity, "Code", "the entity named")
      try expect(
        clash.idValue == .int(4_999) || clash.idValue == .int(5_000), "one of the two rows is named: \(clash)"
      )
      let duplicate = try await expectMigrationFailure("two rows given one id") {
        try await store.migrate(
          MigrationPlan([
            rewriting("same-id") { attributes in
              if attributes["id"] == .int(10) {
                attributes["id"] = .int(2_500)
                attributes["code"] = .string("moved")
              }
            }
          ]))
      }
      try expectEqual(duplicate.entity, "Code", "the entity named")
      try expectEqual(duplicate.idValue, .int(2_500), "the id two rows were given")
      try expect(try await store.digest() == digest, "the failed steps changed nothing")
      try expectEqual(try await store.migrations().map(\.name), [], "steps recorded")

      try await store.migrate(MigrationPlan([rewriting("use-all") { _ in }]))
      try await store.prepare(schemas: [codes])
      try expectEqual(
        try await store.countRows(
          Query(entity: "Code", filter: .compare(field: "uses", op: .equal, value: .int(1)))),
        Int(codeCount), "rows rewritten")
      try expectEqual(
        try await store.getRows(entity: "Code", ids: [.int(4_321)]).first?[1], .string("c4321"),
        "a rewritten row's code")
    }
  ]
}

/// Runs `body`, which must fail with ``CofferError/Code/migrationFailed``, and returns the error.
private func expectMigrationFailure(_ what: String, _ body: () async throws -> Void) async throws
  -> CofferError
{
  do {
    try await body()
  } catch let error as CofferError {
    try expectEqual(error.code, .migrationFailed, "\(what): error code")
    return error
  }
  throw CheckFailure("\(what): expected migrationFailed, but it succeeded")
}
