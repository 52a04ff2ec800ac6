@_spi(Backend) import Coffer
import CofferChildProcess
import Foundation
import Logging

extension ConformanceSuite {
  /// How many rows the killed-migration check's entity holds.
  static let killedMigrationRows = 3000

  /// The entity the killed-migration check migrates.
  static let killedMigrationSchema: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Ledger",
        fields: [Field("id", .int), Field("amount", .int), Field("memo", .string, isOptional: true)],
        idField: "id", indexes: [Index(["amount"])])
    } catch {
      preconditionFailure("The fixture schema is invalid: \(error)")
    }
  }()

  /// The plan the child process runs while it is killed: two steps that each rewrite every row.
  static let killedMigrationPlan = MigrationPlan([
    .addField("ledger-cents", entity: "Ledger", Field("cents", .int)) { record in
      guard case .int(let amount)? = record["amount"] else { return .int(0) }
      return .int(amount * 100)
    },
    .changeKind("ledger-amount-text", entity: "Ledger", field: "amount", to: .string, using: .intToString),
  ])

  /// The child side of `migration.killed-process-leaves-steps-whole`: opens the store and runs
  /// ``killedMigrationPlan``.
  static func runMigrationChild(url: String, registry: BackendRegistry, logger: Logger? = nil) async throws {
    let store = Store(backend: try await registry.open(url, logger: logger))
    let clock = ContinuousClock()
    let started = clock.now
    FileHandle.standardOutput.write(Data("migrating\n".utf8))
    try await store.migrate(killedMigrationPlan)
    let elapsed = clock.now - started
    let micros = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
    FileHandle.standardOutput.write(Data("migrated in \(micros) µs\n".utf8))
    try await store.close()
  }

  /// How many times the killed-migration check kills a migrating process:
  /// `COFFER_MIGRATION_KILLS` when set, else 6.
  static var migrationKills: Int {
    ProcessInfo.processInfo.environment["COFFER_MIGRATION_KILLS"].flatMap(Int.init).map { max(1, $0) } ?? 6
  }

  static let killedMigrationChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "migration.killed-process-leaves-steps-whole", requires: [.durable, .reopenable, .migrations],
      "A process killed at a random moment while it migrates leaves the store exactly before or after each "
        + "step, its record agreeing with its data; migrating again finishes the plan."
    ) { context in
      let child = try childProgram(of: context, as: "the migrating process")
      var random = SplitMix64(seed: differentialSeed() ^ 0x4B49_4C4C)
      // The states the store may be found in: no step, the first, both — each a digest.
      var states: [StoreDigest] = []
      var duration = Duration.milliseconds(200)
      var landed = [0, 0, 0]
      for round in 0...migrationKills {
        let url = context.target.scratchURL(in: context.directory, name: "\(context.checkID)-\(round)")
        do {
          let store = Store(backend: try await context.target.open(url))
          try await store.prepare(schemas: [killedMigrationSchema])
          try await store.apply(
            ChangeSet([
              .insertMany(
                entity: "Ledger",
                rows: RowSource(count: killedMigrationRows) { n in
                  Row([.int(Int64(n)), .int(Int64(n % 977) - 400), n % 5 == 0 ? .null : .string("memo \(n)")])
                })
            ]))
          if states.isEmpty {
            states.append(try await store.digest())
            for steps in 1...killedMigrationPlan.steps.count {
              let prefix = MigrationPlan(Array(killedMigrationPlan.steps.prefix(steps)))
              guard let digest = try await store.rehearseMigration(prefix).digest else {
                throw CheckFailure("a rehearsal gave no digest")
              }
              states.append(digest)
            }
          }
          try await store.close()
          let log = context.directory + "/child-\(round).log"
          guard FileManager.default.createFile(atPath: log, contents: nil) else {
            throw CheckFailure("Could not create the child's log file \(log).")
          }
          let process = try ChildProcess(
            child.executable, child.arguments + [url.description, "migrate", "0"], standardOutput: .file(log),
            standardError: .standardOutput)
          if round == 0 {
            // The first run is not killed: it measures how long the migration itself takes.
            let termination = await process.waitUntilExit()
            let printed = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            guard termination == .exited(0),
              let line = printed.split(separator: "\n").first(where: { $0.hasPrefix("migrated in ") }),
              let micros = Int64(line.dropFirst("migrated in ".count).prefix { $0.isNumber })
            else {
              throw CheckFailure("The migrating child failed with \(termination): \(show(printed))")
            }
            duration = .microseconds(micros)
          } else {
            // Killed at a random moment of its migration (now and then just after it).
            let deadline = ContinuousClock.now + .seconds(60)
            while process.termination == nil,
              !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("migrating")
            {
              guard ContinuousClock.now < deadline else {
                throw CheckFailure("The child did not start migrating.")
              }
              try await Task.sleep(for: .milliseconds(1))
            }
            try await Task.sleep(for: duration * (Double(random.below(1100)) / 1000))
            process.kill()
            _ = await process.waitUntilExit()
          }
          let reopened = Store(backend: try await context.target.open(url))
          let record = try await reopened.migrations()
          try expect(
            record.count <= killedMigrationPlan.steps.count
              && record.map(\.name) == killedMigrationPlan.steps.prefix(record.count).map(\.name),
            "round \(round): the record after the kill names \(record.map(\.name))")
          try expectEqual(
            try await reopened.digest(), states[record.count],
            "round \(round): the data after the kill, against the record's \(record.count) steps")
          if round > 0 { landed[record.count] += 1 }
          try await reopened.migrate(killedMigrationPlan)
          try expectEqual(try await reopened.digest(), states[2], "round \(round): the data after finishing")
          try await reopened.close()
          await context.target.removeScratch(url)
        } catch {
          await context.target.removeScratch(url)
          throw error
        }
      }
      if ProcessInfo.processInfo.environment["COFFER_MIGRATION_KILLS"] != nil {
        // A long run asked for by hand says where its kills landed.
        let line =
          "\(context.target.name): \(migrationKills) kills; the store was found before the first step "
          + "\(landed[0]) times, after the first \(landed[1]), after both \(landed[2])\n"
        FileHandle.standardError.write(Data(line.utf8))
      }
    }
  ]
}
