@_spi(Backend) import Coffer

extension ConformanceSuite {
  /// Runs of updates and upserts of an entity with a unique index: each change is checked as the
  /// ones before it left the rows, however a backend groups the run into statements.
  static let batchUniqueRunChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "batch.unique-run-in-order",
      "In a run of updates, a unique value a later update frees cannot be taken earlier: the batch fails with "
        + "uniqueViolation naming the row that took it, and applies nothing; taken after it is freed, it works."
    ) { context in
      let store = try await context.store(with: [
        Account(id: 1, email: "a@x", name: "A"), Account(id: 2, email: "b@x", name: "B"),
      ])
      let error = try await expectThrows(.uniqueViolation, "2 takes a@x, then 1 leaves it") {
        try await store.batch { batch in
          try batch.update(Account(id: 2, email: "a@x", name: "B"))
          try batch.update(Account(id: 1, email: "c@x", name: "A"))
        }
      }
      try expectEqual(error.entity, "Account", "error.entity")
      try expectEqual(error.idValue, .int(2), "error.id")
      try expect(error.field?.contains("email") == true, "error.field names email: \(show(error.field))")
      try expectEqual(
        try await store.all(Account.self).map(\.email), ["a@x", "b@x"], "emails after the refused batch")
      try await expectThrows(.uniqueViolation, "1 and 2 swap their emails") {
        try await store.batch { batch in
          try batch.update(Account(id: 1, email: "b@x", name: "A"))
          try batch.update(Account(id: 2, email: "a@x", name: "B"))
        }
      }
      let summary = try await store.batch { batch in
        try batch.upsert(Account(id: 1, email: "c@x", name: "A"))
        try batch.upsert(Account(id: 2, email: "a@x", name: "B"))
        try batch.upsert(Account(id: 3, email: "b@x", name: "C"))
      }
      try expectEqual(summary, ChangeSummary(inserted: 1, updated: 2), "summary of the upserts")
      try expectEqual(
        try await store.all(Account.self).map(\.email), ["c@x", "a@x", "b@x"], "emails after the upserts")
    },
    ConformanceCheck(
      "batch.unique-long-run",
      "A batch of 2,000 updates of an entity with a unique index applies them all; when one of them takes the "
        + "unique value of a row outside the batch, it fails with uniqueViolation naming that row's id and the "
        + "field, and applies nothing."
    ) { context in
      let accounts = (1...Int64(2_000)).map { Account(id: $0, email: "old\($0)@x", name: "n\($0)") }
      let store = try await context.store(with: accounts + [Account(id: 9_999, email: "kept@x", name: "K")])
      let error = try await expectThrows(.uniqueViolation, "2,000 updates, one taking kept@x") {
        try await store.batch { batch in
          for account in accounts {
            try batch.update(
              Account(id: account.id, email: account.id == 1_500 ? "kept@x" : nil, name: "new"))
          }
        }
      }
      try expectEqual(error.entity, "Account", "error.entity")
      try expectEqual(error.idValue, .int(1_500), "error.id")
      try expect(error.field?.contains("email") == true, "error.field names email: \(show(error.field))")
      try expectEqual(
        try await store.query(Account.self).filter(\.name == "new").count(), 0,
        "accounts the refused batch changed")
      let renamed = try await store.batch { batch in
        for account in accounts {
          try batch.update(Account(id: account.id, email: "new\(account.id)@x", name: "new"))
        }
      }
      try expectEqual(renamed.updated, 2_000, "rows given new emails")
      // Each takes the email the one before it had: one after another, each is free when taken.
      let summary = try await store.batch { batch in
        for account in accounts {
          try batch.update(Account(id: account.id, email: "new\(account.id - 1)@x", name: "moved"))
        }
      }
      try expectEqual(summary.updated, 2_000, "rows updated")
      try expectEqual(
        try await store.get(Account.self, id: 2_000)?.email, "new1999@x", "the last account's email")
      try expectEqual(
        try await store.query(Account.self).filter(\.name == "moved").count(), 2_000, "accounts moved")
    },
  ]
}
