import Coffer
import CofferPlist
import Foundation
import FuzzDriver

/// A folder of this process's own for the store file each input becomes.
private let folder: String = {
  let path = NSTemporaryDirectory() + "coffer-fuzz-plist-\(getpid())"
  try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  return path
}()

/// Opens the input as a plist store file (binary or XML, whichever it claims to be), which
/// decodes every schema and row in it: it must open, or fail with a `CofferError`, never crash;
/// a file that fails to open must be left as it was.
private func test(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  let bytes = start.map { Data(bytes: $0, count: count) } ?? Data()
  let path = folder + "/store.plist"
  guard FileManager.default.createFile(atPath: path, contents: bytes) else { return 0 }
  defer {
    try? FileManager.default.removeItem(atPath: path)
    try? FileManager.default.removeItem(atPath: path + ".lock")
  }
  do {
    // Opening decodes the whole file: every entity's schema and every row.
    let backend = try PlistBackend(path: path)
    let closed = DispatchSemaphore(value: 0)
    Task {
      try? await backend.close()
      closed.signal()
    }
    closed.wait()
  } catch let error as CofferError {
    if ProcessInfo.processInfo.environment["COFFER_FUZZ_VERBOSE"] != nil { print(error) }
    // (Foundation's contents(atPath:) leaks a buffer on an empty file: compare sizes first.)
    let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
    if size != bytes.count || (!bytes.isEmpty && FileManager.default.contents(atPath: path) != bytes) {
      fatalError("a plist file that failed to open was changed")
    }
  } catch {
    fatalError("opening a plist file threw a non-Coffer error: \(error)")
  }
  return 0
}

@_cdecl("fuzz_plist_file_main")
func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
  runFuzzer(argc, argv) { test($0, $1) }
}

/// The function libFuzzer's own `main` calls, when the linker picks that one.
@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt { test(start, count) }
