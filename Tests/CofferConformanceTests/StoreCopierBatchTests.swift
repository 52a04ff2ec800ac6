@_spi(Backend) import Coffer
import CofferMemory
import CofferTools
import Foundation
import Testing

/// How a copy cuts a store into batches.
@Suite struct StoreCopierBatchTests {
  /// Rows of 1 MiB each: 40 of them are far under the 10,000-row batch, but over the 16 MiB a
  /// batch holds, so the copy takes several batches — and still copies every row once.
  /// On every backend as the source: a page cut short stops the backend's read midway.
  @Test(arguments: backendURLs)
  func largeValuesGoInSmallerBatches(source url: String) async throws {
    let scratch = try ScratchStores()
    do {
      let schema = try EntitySchema(
        name: "Blob", fields: [Field("id", .int), Field("data", .bytes)], idField: "id")
      let source = try await scratch.store(url, name: "source")
      try await source.prepare(schemas: [schema])
      try await source.backend.insert(into: schema, count: 40) { number in
        Row([.int(Int64(number)), .bytes(Data(repeating: UInt8(number), count: 1 << 20))])
      }
      let target = Store(backend: MemoryBackend())
      let batches = Counter()
      let report = try await StoreCopier(from: source, to: target).run { progress in
        if progress.entityRowsCopied > 0 { batches.add() }
      }
      #expect(report.isVerified, "\(report.differences)")
      #expect(report.rowsCopied == 40)
      #expect(batches.value >= 3, "batches of about 16 MiB: \(batches.value)")
      // The source still answers after its reads were stopped midway.
      #expect(try await source.countRows(Query(entity: "Blob")) == 40)
    } catch {
      await scratch.removeAll()
      throw error
    }
    await scratch.removeAll()
  }

  /// Small rows go in batches of the batch size.
  @Test func smallRowsGoInBatchesOfTheBatchSize() async throws {
    let schema = try EntitySchema(name: "Small", fields: [Field("id", .int)], idField: "id")
    let source = Store(backend: MemoryBackend())
    try await source.prepare(schemas: [schema])
    try await source.backend.insert(into: schema, count: 1_000) { Row([.int(Int64($0))]) }
    let target = Store(backend: MemoryBackend())
    let batches = Counter()
    var copier = StoreCopier(from: source, to: target)
    copier.batchSize = 300
    let report = try await copier.run { progress in
      if progress.entityRowsCopied > 0 { batches.add() }
    }
    #expect(report.isVerified)
    #expect(batches.value == 4, "1,000 rows in batches of 300")
  }
}

/// A count shared with a `@Sendable` callback.
final class Counter: @unchecked Sendable {
  // `@unchecked Sendable`: `lock` guards `count`.
  private let lock = NSLock()
  private var count = 0
  func add() { lock.withLock { count += 1 } }
  var value: Int { lock.withLock { count } }
}
