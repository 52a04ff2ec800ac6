@_spi(Backend) import Coffer
@_spi(Backend) import CofferConformance
import CofferMemory
import CofferTools
import Foundation
import Testing

/// A memory backend that hands back damaged reads, as a store whose indexes or rows went out of
/// step would: what ``Store/verify()`` must notice.
private final class DamagedBackend: StorageBackend {
  enum Damage: Sendable, CaseIterable {
    /// A read ordered by any field but the id leaves out its last row.
    case indexLosesARow
    /// A full read returns one row twice.
    case rowStoredTwice
    /// One row holds null in a required field.
    case nullInRequiredField
    /// One row holds a string where its field is an integer.
    case wrongKind
    /// Two rows share a value of a unique index.
    case uniqueBroken
    /// A count says one row more than there is.
    case countOff
  }

  let damage: Damage
  let name = "damaged:"
  private let inner = MemoryBackend()

  init(_ damage: Damage) { self.damage = damage }

  /// The memory backend's; it does not adopt ``SnapshotReading``, so its reads go through
  /// ``read(_:_:)``.
  var capabilities: BackendCapabilities { inner.capabilities }

  func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema] { try await inner.prepare(schemas) }

  func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    guard query.entity == "Every" else { return try await inner.read(query, visit) }
    let schema = EveryKindFixture.schema("Every")
    var rows = try await inner.fetch(query)
    let byID = query.sort.allSatisfy { $0.field == "id" }
    switch damage {
    case .indexLosesARow where !byID: rows.removeLast()
    case .rowStoredTwice where byID: rows.insert(rows[3], at: 3)
    case .nullInRequiredField: rows[2][schema.position(of: "date") ?? 0] = .null
    case .wrongKind: rows[1][schema.position(of: "int") ?? 0] = .string("seven")
    case .uniqueBroken:
      if let position = schema.position(of: "string"), let first = rows.first?[position] {
        rows[rows.count - 1][position] = first
      }
    default: break
    }
    try RowFields.handOver(rows, to: visit)
  }

  func count(_ query: Query) async throws -> Int {
    try await inner.count(query) + (damage == .countOff && query.entity == "Every" ? 1 : 0)
  }

  func apply(_ changes: ChangeSet) async throws -> ChangeSummary { try await inner.apply(changes) }

  func close() async throws { try await inner.close() }
}

@Suite struct StoreVerifyTests {
  @Test func aWholeStoreHasNoProblems() async throws {
    let store = Store(backend: MemoryBackend())
    try await store.prepare(schemas: EveryKindFixture.schemas)
    try await store.apply(EveryKindFixture.changeSet(extra: 30))
    let report = try await store.verify()
    #expect(report.isClean, "\(report.problems)")
    #expect(report.rows == 38 + 9 + 9)
  }

  @Test(arguments: DamagedBackend.Damage.allCases)
  fileprivate func findsTheDamage(_ damage: DamagedBackend.Damage) async throws {
    let store = Store(backend: DamagedBackend(damage))
    try await store.prepare(schemas: EveryKindFixture.schemas)
    try await store.apply(EveryKindFixture.changeSet(extra: 30))
    let report = try await store.verify()
    #expect(!report.isClean)
    #expect(report.problems.allSatisfy { $0.entity == "Every" }, "\(report.problems)")
    let text = report.problems.map(\.description).joined(separator: "\n")
    switch damage {
    case .indexLosesARow:
      #expect(report.problems.count == 3, "one per index: \(text)")
      #expect(
        text.contains("index:int") && text.contains("unique:string") && text.contains("index:bool,date"))
    case .rowStoredTwice: #expect(text.contains("stored more than once"), "\(text)")
    case .nullInRequiredField: #expect(text.contains("date: A required field holds null"), "\(text)")
    case .wrongKind: #expect(text.contains("int: The field holds a value of kind string"), "\(text)")
    case .uniqueBroken: #expect(text.contains("unique:string"), "\(text)")
    case .countOff: #expect(text.contains("A count of every row gives 39"), "\(text)")
    }
    // No stored value appears in a problem.
    #expect(!text.contains("seven") && !text.contains("row 10"), "\(text)")
  }
}
