@_spi(Backend) import Coffer
@_spi(Fuzzing) import CofferSQLite
import Foundation
import FuzzDriver
import FuzzSupport

/// Decodes the rest of the input as what its first byte picks: 0 an entity's `coffer_schema`
/// row, its `columns` text and `schema` text split at the first NUL byte
/// (`SQLiteFuzzing.decodeCatalogEntry`); 1 a row of the migration log. Each must decode or throw
/// a `CofferError`; what decodes must encode to texts that decode to the same, and encode again
/// to the same texts.
private func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let bytes = inputBytes(start, count)
  guard let first = bytes.first else { return 0 }
  let stored = bytes.dropFirst()
  do {
    if first % 2 == 0 {
      let split = stored.firstIndex(of: 0) ?? stored.endIndex
      let entry = try SQLiteFuzzing.decodeCatalogEntry(
        "Fuzzed", tableName: "Fuzzed", columns: Array(stored[..<split]),
        schema: split < stored.endIndex ? Array(stored[(split + 1)...]) : [])
      let texts = try roundTrip { try SQLiteFuzzing.encodeCatalogEntry(entry) }
      let again = try roundTrip {
        try SQLiteFuzzing.decodeCatalogEntry(
          "Fuzzed", tableName: "Fuzzed", columns: texts.columns, schema: texts.schema)
      }
      guard again == entry else { violated("a decoded coffer_schema row written again decodes otherwise") }
      guard try roundTrip({ try SQLiteFuzzing.encodeCatalogEntry(again) }) == texts else {
        violated("a coffer_schema row written twice gives other texts")
      }
    } else {
      let record = try SQLiteFuzzing.decodeMigration(Array(stored))
      let again = try roundTrip { try SQLiteFuzzing.decodeMigration(Array(try record.encoded())) }
      guard same(again, record) else { violated("a decoded migration row written again decodes otherwise") }
    }
  } catch is CofferError {
    return 0
  } catch {
    unexpected(error, from: "decoding a coffer_schema row")
  }
  return 0
}

/// Runs a step of a round trip, where any error breaks the property.
private func roundTrip<T>(_ body: () throws -> T) throws -> T {
  do { return try body() } catch { violated("a decoded entry does not encode and decode again", "\(error)") }
}

/// Seeds: the `coffer_schema` row of each sample entity, and a migration row.
private func seeds(_ sample: Sample) throws -> [[UInt8]] {
  var seeds: [[UInt8]] = []
  for entity in sample.entities {
    let entry = SQLiteFuzzing.CatalogEntry(
      schema: entity.schema, tableName: entity.schema.name, columns: entity.schema.fields.map(\.name))
    let texts = try SQLiteFuzzing.encodeCatalogEntry(entry)
    seeds.append([0] + texts.columns + [0] + texts.schema)
  }
  let migration = MigrationRecord(
    name: "add-score", position: 0, appliedAt: Date(timeIntervalSince1970: 1_750_000_000.25), rowsTouched: 12)
  seeds.append([1] + Array(try migration.encoded()))
  return seeds
}

@_cdecl("fuzz_sqlite_catalog_main")
func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  runFuzzer(argc, argv) { test($0, $1) }
}

/// Called by libFuzzer before the first input: writes the seeds or warms up (`prepareTarget`).
@_cdecl("LLVMFuzzerInitialize")
func initialize(
  _ argc: UnsafeMutablePointer<CInt>?,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
  prepareTarget("sqlite-catalog", seeds: seeds) { test($0, $1) }
}

/// The function libFuzzer's own `main` calls, when the linker picks that one.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt { test(start, count) }
