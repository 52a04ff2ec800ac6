@_spi(Backend) import Coffer
@_spi(Fuzzing) import CofferLMDB
import Foundation
import FuzzDriver
import FuzzSupport

/// Decodes the rest of the input as the catalog entry its first byte picks: 0 an entity's entry
/// (`LMDBFuzzing.decodeCatalogEntry`), 1 the store's format entry, 2 a migration entry. Each must
/// decode or throw a `CofferError`; an entity entry or a migration that decodes must encode to
/// bytes that decode to the same, and encode again to the same bytes.
private func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let bytes = inputBytes(start, count)
  guard let first = bytes.first else { return 0 }
  let stored = Array(bytes.dropFirst())
  do {
    switch first % 3 {
    case 0:
      let entry = try LMDBFuzzing.decodeCatalogEntry(stored, entity: "Fuzzed")
      let encoded = try encoding { try LMDBFuzzing.encodeCatalogEntry(entry) }
      let again = try decoding { try LMDBFuzzing.decodeCatalogEntry(encoded, entity: "Fuzzed") }
      guard again == entry else { violated("a decoded catalog entry written again decodes otherwise") }
      guard try encoding({ try LMDBFuzzing.encodeCatalogEntry(again) }) == encoded else {
        violated("a catalog entry written twice gives other bytes")
      }
    case 1:
      try LMDBFuzzing.checkCatalogFormat(stored)
    default:
      let record = try LMDBFuzzing.decodeCatalogMigration(stored)
      let encoded = try encoding { Array(try record.encoded()) }
      let again = try decoding { try LMDBFuzzing.decodeCatalogMigration(encoded) }
      guard same(again, record) else { violated("a decoded migration entry written again decodes otherwise") }
    }
  } catch is CofferError {
    return 0
  } catch {
    unexpected(error, from: "decoding a catalog entry")
  }
  return 0
}

/// Encodes what was decoded; any error breaks the round trip.
private func encoding(_ body: () throws -> [UInt8]) throws -> [UInt8] {
  do { return try body() } catch { violated("a decoded catalog entry does not encode", "\(error)") }
}

/// Decodes what was encoded; any error breaks the round trip.
private func decoding<T>(_ body: () throws -> T) throws -> T {
  do { return try body() } catch { violated("an encoded catalog entry does not decode", "\(error)") }
}

/// Seeds: an entry per sample entity (with an older layout), the format entry, a migration.
private func seeds(_ sample: Sample) throws -> [[UInt8]] {
  var seeds: [[UInt8]] = []
  for entity in sample.entities {
    let schema = entity.schema
    let indexes = schema.indexes.enumerated().map { "index:\(schema.name):\($0.offset)" }
    let entry = LMDBFuzzing.CatalogEntry(
      layouts: [schema, schema], current: 1, rows: "rows:\(schema.name)", indexes: indexes)
    seeds.append([0] + (try LMDBFuzzing.encodeCatalogEntry(entry)))
  }
  seeds.append([1] + Array(#"{"format":"coffer-lmdb","version":1}"#.utf8))
  let migration = MigrationRecord(
    name: "add-score", position: 0, appliedAt: Date(timeIntervalSince1970: 1_750_000_000.25), rowsTouched: 12)
  seeds.append([2] + Array(try migration.encoded()))
  return seeds
}

@_cdecl("fuzz_lmdb_catalog_main")
func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  runFuzzer(argc, argv) { test($0, $1) }
}

/// Called by libFuzzer before the first input: writes the seeds or warms up (`prepareTarget`).
@_cdecl("LLVMFuzzerInitialize")
func initialize(
  _ argc: UnsafeMutablePointer<CInt>?,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
  prepareTarget("lmdb-catalog", seeds: seeds) { test($0, $1) }
}

/// The function libFuzzer's own `main` calls, when the linker picks that one.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt { test(start, count) }
