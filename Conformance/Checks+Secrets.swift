@_spi(Backend) import Coffer
import Foundation

/// Text that stands for a secret: it must never appear in an error.
private let secret = "S3CR3T-7f1c"

extension ConformanceSuite {
  static let secretChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "errors.no-value-in-any-error",
      "Errors name the store, entity, id and field but never a stored value: every failing write and query "
        + "made with values holding a secret gives errors whose text does not contain it."
    ) { context in
      let store = try await context.store(with: [Account(id: 1, email: secret + "@a", name: secret + " A")])
      try await store.insert(Item.sample)
      var errors: [CofferError] = []
      func collect(_ body: () async throws -> Void) async throws {
        do {
          try await body()
        } catch let error as CofferError {
          errors.append(error)
        }
      }
      try await collect { try await store.insert(Account(id: 1, email: secret + "@b", name: secret)) }
      try await collect { try await store.update(Account(id: 99, email: secret + "@c", name: secret)) }
      try await collect { try await store.insert(Account(id: 2, email: secret + "@a", name: secret)) }
      try await collect {
        try await store.batch { batch in
          try batch.insert(Account(id: 3, email: secret + "@d", name: secret))
          try batch.insert(Account(id: 4, email: secret + "@d", name: secret))
        }
      }
      try await collect {
        try await store.insert(Item(id: 50, name: secret, rank: nil, score: .nan, flag: true))
      }
      // Longer than any key an index may hold (LMDB refuses it; the others store it).
      try await collect {
        try await store.insert(Account(id: 5, email: String(repeating: secret, count: 80), name: secret))
      }
      try await collect {
        try await store.apply(
          ChangeSet([.insert(entity: "Item", row: Row([60, .string(secret), .string(secret), 1.0, true]))]))
      }
      try await collect { _ = try await store.query(Item.self).filter(FieldRef("rank") == secret).fetch() }
      try await collect {
        _ = try await store.query(Item.self).filter(.string(field: "flag", match: .contains, pattern: secret))
          .count()
      }
      try await collect { try await store.query(Item.self).filter(FieldRef("score") > secret).delete() }
      try expect(errors.count >= 9, "only \(errors.count) of the failing calls threw a CofferError")
      for error in errors {
        let texts = [error.description, error.message, String(describing: error.underlying)]
        try expect(
          !texts.contains { $0.contains(secret) },
          "a \(error.code) error shows a stored value: \(error.description)")
      }
    }
  ]
}
