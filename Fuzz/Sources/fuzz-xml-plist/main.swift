import FuzzDriver
import FuzzPlist
import FuzzSupport

/// Decodes the input as an XML plist store file image, in memory, the way opening the file does
/// (`PlistFuzzing.decodeXML`): it must decode or throw a `CofferError`, and a store that
/// decodes must decode the same after being written again in either format.
private func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  checkPlist(inputBytes(start, count), format: .xml)
  return 0
}

@_cdecl("fuzz_xml_plist_main")
func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  runFuzzer(argc, argv) { test($0, $1) }
}

/// Called by libFuzzer before the first input: writes the seeds or warms up (`prepareTarget`).
@_cdecl("LLVMFuzzerInitialize")
func initialize(
  _ argc: UnsafeMutablePointer<CInt>?,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?
) -> CInt {
  prepareTarget("xml-plist", seeds: { plistSeeds($0, format: .xml) }) { test($0, $1) }
}

/// The function libFuzzer's own `main` calls, when the linker picks that one.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt { test(start, count) }
