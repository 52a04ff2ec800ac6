import Coffer
@_spi(Fuzzing) import CofferTools
import Foundation
import FuzzDriver
import FuzzSupport

/// Reads the input as lines of an export the way the importer does
/// (`ImportFuzzing.parseLine`): the first line with rows read as the sample entity of every
/// kind, the second (if any) with rows read as the entity the first line's header describes,
/// when it is one. Each line must parse or throw a `CofferError`; a header or row that parses
/// must be written by the exporter as a line that parses to the same.
private func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  guard let text = String(validating: inputBytes(start, count), as: UTF8.self) else { return 0 }
  let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
  var schema = Sample.everyKind.schema
  for line in lines {
    let parsed: ImportFuzzing.Line
    do {
      parsed = try ImportFuzzing.parseLine(String(line), rowsOf: schema)
    } catch is CofferError {
      return 0
    } catch {
      unexpected(error, from: "parsing an export line")
    }
    switch parsed {
    case .header(let header, let rows):
      let again = roundTrip {
        try ImportFuzzing.parseLine(try ImportFuzzing.headerLine(header, rows: rows), rowsOf: schema)
      }
      guard again == parsed else { violated("a header line written again parses otherwise") }
      schema = header
    case .row(let row):
      let again = roundTrip {
        try ImportFuzzing.parseLine(ImportFuzzing.rowLine(row, of: schema), rowsOf: schema)
      }
      guard case .row(let other) = again, same(row.values, other.values) else {
        violated("a row line written again parses otherwise")
      }
    default: break
    }
  }
  return 0
}

/// Runs a step of a round trip, where any error breaks the property.
private func roundTrip(_ body: () throws -> ImportFuzzing.Line) -> ImportFuzzing.Line {
  do { return try body() } catch { violated("a parsed line written again does not parse", "\(error)") }
}

/// Seeds: each sample entity's header line followed by one of its row lines, the row lines of
/// every kind alone, and an opening and a closing line.
private func seeds(_ sample: Sample) throws -> [[UInt8]] {
  var seeds: [[UInt8]] = []
  for entity in sample.entities {
    let header = try ImportFuzzing.headerLine(entity.schema, rows: entity.rows.count)
    for row in entity.rows.prefix(2) {
      seeds.append(Array((header + "\n" + ImportFuzzing.rowLine(row, of: entity.schema)).utf8))
    }
  }
  for row in Sample.everyKind.rows {
    seeds.append(Array(ImportFuzzing.rowLine(row, of: Sample.everyKind.schema).utf8))
  }
  seeds.append(Array(#"{"coffer":"export","version":1}"#.utf8))
  seeds.append(Array(#"{"end":{"entities":[{"hash":"5f0c","name":"Sample","rows":3}]}}"#.utf8))
  return seeds
}

@_cdecl("fuzz_jsonl_line_main")
func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  runFuzzer(argc, argv) { test($0, $1) }
}

/// Called by libFuzzer before the first input: writes the seeds or warms up (`prepareTarget`).
@_cdecl("LLVMFuzzerInitialize")
func initialize(
  _ argc: UnsafeMutablePointer<CInt>?,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
  prepareTarget("jsonl-line", seeds: seeds) { test($0, $1) }
}

/// The function libFuzzer's own `main` calls, when the linker picks that one.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt { test(start, count) }
