@_spi(Backend) import Coffer
import CofferMemory
import CofferTools
import Foundation
import FuzzDriver

/// Lines as an asynchronous sequence.
private struct Lines: AsyncSequence, Sendable {
  typealias Element = String
  let lines: [String]
  func makeAsyncIterator() -> Iterator { Iterator(lines: lines) }
  struct Iterator: AsyncIteratorProtocol {
    let lines: [String]
    var position = 0
    mutating func next() async -> String? {
      guard position < lines.count else { return nil }
      defer { position += 1 }
      return lines[position]
    }
  }
}

/// Imports the input as a JSON Lines export into a new in-memory store: it must import or fail
/// with a `CofferError`, never crash; a failed import must leave no row behind; and what was
/// imported must export again to text that imports to the same digest.
private func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let bytes = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
  guard let text = String(validating: bytes, as: UTF8.self) else { return 0 }
  let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
  let done = DispatchSemaphore(value: 0)
  Task {
    defer { done.signal() }
    let store = Store(backend: MemoryBackend())
    do {
      let report = try await store.importJSONLines(Lines(lines: lines))
      var again = ""
      let digest = try await store.exportJSONLines { again += $0 }
      guard digest == report.digest else { fatalError("an imported store exports another digest") }
      let second = Store(backend: MemoryBackend())
      let reimported = try await second.importJSONLines(
        Lines(lines: again.split(separator: "\n").map(String.init)))
      guard reimported.digest == digest else { fatalError("an export of an import does not import the same") }
    } catch let error as CofferError {
      if ProcessInfo.processInfo.environment["COFFER_FUZZ_VERBOSE"] != nil { print(error) }
      for schema in (try? await store.storedSchemas()) ?? [] {
        let rows = (try? await store.countRows(Query(entity: schema.name))) ?? 0
        guard rows == 0 else { fatalError("a failed import left \(rows) rows of an entity") }
      }
    } catch {
      fatalError("an import threw a non-Coffer error: \(error)")
    }
  }
  done.wait()
  return 0
}

@_cdecl("fuzz_jsonl_import_main")
func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  runFuzzer(argc, argv) { test($0, $1) }
}

/// The function libFuzzer's own `main` calls, when the linker picks that one.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt { test(start, count) }
