@_spi(Backend) import Coffer
@_spi(Backend) import CofferConformance
import CofferStores
import CofferTestSupport
import CofferTools
import Foundation
import Testing

/// Scratch stores of every backend, made from the base URLs the conformance suite runs on and
/// removed afterwards (PostgreSQL ones are schemas of their own).
final class ScratchStores {
  let folder: TemporaryFolder
  let registry = BackendRegistry.forConformanceTests()
  private var made: [(StoreURL, Store)] = []

  init() throws { folder = try TemporaryFolder("coffer-copy-matrix") }

  /// A new, empty store of the backend `base` names.
  func store(_ base: String, name: String) async throws -> Store {
    let url = try StoreURL(base)
    let entry = try registry.entry(for: url)
    let scratch = entry.scratchURL(url, folder.path, name)
    let store = Store(backend: try await entry.open(scratch, .disabled))
    made.append((scratch, store))
    return store
  }

  /// Closes every store and removes what the backends keep outside the folder.
  func removeAll() async {
    for (url, store) in made {
      try? await store.close()
      if let entry = try? registry.entry(for: url) { await entry.removeScratch?(url) }
    }
    made = []
  }
}

/// Copies between every pair of backends — every source into every target, the same backend
/// included — a store holding every value kind and its extremes, and checks each copy's
/// digests, schemas and rows.
@Suite struct StoreCopyMatrixTests {
  /// More ordinary rows than one batch, so each copy takes several.
  static let extraRows = 300

  @Test(arguments: backendURLs)
  func copiesFromEveryBackendToEveryOther(source sourceURL: String) async throws {
    let scratch = try ScratchStores()
    do {
      let source = try await scratch.store(sourceURL, name: "source")
      try await source.prepare(schemas: EveryKindFixture.schemas)
      try await source.apply(EveryKindFixture.changeSet(extra: Self.extraRows))
      let sourceDigest = try await source.digest()
      #expect(sourceDigest.count == 8 + Self.extraRows + 9 + 9)
      for (number, targetURL) in backendURLs.enumerated() {
        let target = try await scratch.store(targetURL, name: "target-\(number)")
        var copier = StoreCopier(from: source, to: target)
        copier.batchSize = 128
        let report = try await copier.run()
        #expect(report.isVerified, "\(sourceURL) → \(targetURL): \(report.differences)")
        #expect(report.rowsCopied == sourceDigest.count, "\(sourceURL) → \(targetURL)")
        #expect(try await target.storedSchemas() == EveryKindFixture.schemas, "\(sourceURL) → \(targetURL)")
        // The target's digest, computed anew from what it stores, is the source's.
        #expect(try await target.digest() == sourceDigest, "\(sourceURL) → \(targetURL)")
        let verified = try await target.verify()
        #expect(verified.isClean, "\(sourceURL) → \(targetURL): \(verified.problems)")
        for schema in EveryKindFixture.schemas {
          var query = Query(entity: schema.name, sort: [Sort(schema.idField.name)])
          query.layout = schema
          let copied = try await target.backend.fetch(query)
          let original = try await source.backend.fetch(query)
          #expect(copied == original, "\(sourceURL) → \(targetURL): rows of \(schema.name)")
        }
      }
    } catch {
      await scratch.removeAll()
      throw error
    }
    await scratch.removeAll()
  }

  @Test(arguments: backendURLs)
  func exportsAndImportsExactlyThroughText(url: String) async throws {
    let scratch = try ScratchStores()
    do {
      let source = try await scratch.store(url, name: "source")
      try await source.prepare(schemas: EveryKindFixture.schemas)
      try await source.apply(EveryKindFixture.changeSet(extra: 50))
      var text = ""
      let exported = try await source.exportJSONLines { text += $0 }
      let target = try await scratch.store("memory:", name: "target")
      let imported = try await target.importJSONLines(
        AsyncStream { continuation in
          for line in text.split(separator: "\n") { continuation.yield(String(line)) }
          continuation.finish()
        })
      #expect(imported.digest == exported)
      #expect(try await target.digest() == exported)
    } catch {
      await scratch.removeAll()
      throw error
    }
    await scratch.removeAll()
  }
}
