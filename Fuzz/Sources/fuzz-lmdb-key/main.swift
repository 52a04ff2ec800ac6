@_spi(Backend) import Coffer
@_spi(Fuzzing) import CofferLMDB
import Foundation
import FuzzDriver
import FuzzSupport

/// The id kinds a key is decoded as, chosen by the input's first byte.
private let kinds: [FieldKind] = [.int, .uuid, .string]

/// For each kind, a key other keys are compared with: the order of two keys' bytes must be the
/// order of their ids.
private let pivots: [FieldKind: Value] = [
  .int: .int(42), .uuid: .uuid(UUID(uuid: (128, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))),
  .string: .string("m\u{0}id"),
]

/// Decodes the rest of the input as an id key of the kind its first byte picks
/// (`LMDBFuzzing.decodeIDKey`): it gives an id or `nil`, never a crash; an id it gives must encode
/// to the same bytes (the encoding is canonical) by both key builders, and compare with the
/// kind's pivot as its bytes compare with the pivot's key.
private func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let bytes = inputBytes(start, count)
  guard let first = bytes.first else { return 0 }
  let kind = kinds[Int(first) % kinds.count]
  let key = Array(bytes.dropFirst())
  guard let id = LMDBFuzzing.decodeIDKey(key, kind: kind) else { return 0 }
  let keys = LMDBFuzzing.idKeys(id)
  guard keys.built == key else { violated("a decoded \(kind) id encodes to other bytes") }
  guard keys.onStack == key else { violated("the stack-built key of a \(kind) id differs") }
  guard LMDBFuzzing.indexKey([id]) == [1] + key else { violated("an index key of a \(kind) id differs") }
  if let pivot = pivots[kind] {
    let pivotKey = LMDBFuzzing.idKeys(pivot).built
    let byBytes = key.lexicographicallyPrecedes(pivotKey) ? -1 : (key == pivotKey ? 0 : 1)
    guard byBytes == ValueOrder.compare(id, pivot) else {
      violated("a \(kind) key sorts otherwise than its id")
    }
  }
  return 0
}

/// Seeds: the keys of the sample's ids, each behind the byte that picks its kind.
private func seeds(_ sample: Sample) -> [[UInt8]] {
  var seeds: [[UInt8]] = []
  for entity in sample.entities {
    guard let selector = kinds.firstIndex(of: entity.schema.idField.kind) else { continue }
    for row in entity.rows.prefix(3) {
      seeds.append([UInt8(selector)] + LMDBFuzzing.idKeys(row[entity.schema.idPosition]).built)
    }
  }
  for (selector, kind) in kinds.enumerated() {
    if let pivot = pivots[kind] { seeds.append([UInt8(selector)] + LMDBFuzzing.idKeys(pivot).built) }
  }
  return seeds
}

@_cdecl("fuzz_lmdb_key_main")
func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  runFuzzer(argc, argv) { test($0, $1) }
}

/// Called by libFuzzer before the first input: writes the seeds or warms up (`prepareTarget`).
@_cdecl("LLVMFuzzerInitialize")
func initialize(
  _ argc: UnsafeMutablePointer<CInt>?,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
  prepareTarget("lmdb-key", seeds: seeds) { test($0, $1) }
}

/// The function libFuzzer's own `main` calls, when the linker picks that one.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt { test(start, count) }
