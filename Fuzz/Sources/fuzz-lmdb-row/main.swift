import Coffer
@_spi(Fuzzing) import CofferLMDB
import Foundation
import FuzzDriver
import FuzzSupport

/// The layouts rows are decoded against, as an entity's catalog entry lists them: layout 0, an
/// older schema the current one evolved from (fields added since); layout 1, one whose `score`
/// was a string (which cannot be read as the current schema); layout 2, the current schema,
/// with a field of every kind.
private let layouts: [EntitySchema] = {
  let current = Sample.everyKind.schema
  let fields = [Field("id", .int), Field("name", .string), Field("score", .double, isOptional: true)]
  let renamed = [Field("id", .int), Field("name", .string), Field("score", .string)]
  guard let older = try? EntitySchema(name: current.name, fields: fields, idField: "id"),
    let other = try? EntitySchema(name: current.name, fields: renamed, idField: "id")
  else { fatalError("the older layouts are invalid") }
  return [older, other, current]
}()
private let current = 2

/// Decodes the input as a stored row of the entity (`LMDBFuzzing.decodeRow`): it must decode or
/// throw a `CofferError`; a decoded row, written again under the current layout, must decode to
/// the same values and encode to the same bytes.
private func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let bytes = inputBytes(start, count)
  let values: [Value]
  do {
    values = try LMDBFuzzing.decodeRow(bytes, layouts: layouts, current: current)
  } catch is CofferError {
    return 0
  } catch {
    unexpected(error, from: "decoding a row")
  }
  guard values.count == layouts[current].fields.count else {
    violated("a decoded row has the wrong field count")
  }
  let encoded = LMDBFuzzing.encodeRow(values, layout: current)
  do {
    let again = try LMDBFuzzing.decodeRow(encoded, layouts: layouts, current: current)
    guard same(values, again) else { violated("a decoded row written again decodes otherwise") }
    guard LMDBFuzzing.encodeRow(again, layout: current) == encoded else {
      violated("a decoded row written twice gives other bytes")
    }
  } catch {
    violated("a decoded row written again does not decode", "\(error)")
  }
  return 0
}

/// Seeds: the sample's rows, and the every-kind rows under the current and oldest layouts.
private func seeds(_ sample: Sample) -> [[UInt8]] {
  var seeds = Sample.everyKind.rows.map { LMDBFuzzing.encodeRow($0.values, layout: current) }
  seeds += Sample.everyKind.rows.map { LMDBFuzzing.encodeRow(Array($0.values.prefix(3)), layout: 0) }
  for entity in sample.entities {
    seeds += entity.rows.prefix(2).map { LMDBFuzzing.encodeRow($0.values, layout: 1) }
  }
  return seeds
}

@_cdecl("fuzz_lmdb_row_main")
func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  runFuzzer(argc, argv) { test($0, $1) }
}

/// Called by libFuzzer before the first input: writes the seeds or warms up (`prepareTarget`).
@_cdecl("LLVMFuzzerInitialize")
func initialize(
  _ argc: UnsafeMutablePointer<CInt>?,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
  prepareTarget("lmdb-row", seeds: seeds) { test($0, $1) }
}

/// The function libFuzzer's own `main` calls, when the linker picks that one.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt { test(start, count) }
