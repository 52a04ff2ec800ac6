@_spi(Backend) import Coffer
import FuzzDriver

/// Parses the input as a store URL: any text must give a `StoreURL` or a `CofferError`, never a
/// crash, and a parsed URL's description (which hides a password) must parse again to the same
/// description.
private func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
  guard let url = try? StoreURL(text) else { return 0 }
  if url.password == nil, let again = try? StoreURL(url.description), again.description != url.description {
    fatalError("a StoreURL's description does not parse back to the same URL")
  }
  return 0
}

@_cdecl("fuzz_store_url_main")
func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  runFuzzer(argc, argv) { test($0, $1) }
}

/// The function libFuzzer's own `main` calls, when the linker picks that one.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt { test(start, count) }
