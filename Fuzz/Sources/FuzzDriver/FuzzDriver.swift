/// Runs libFuzzer on `test` with the process's arguments: each fuzz target's entry point.
///
/// SwiftPM links an executable's entry point under the name `<module>_main`, so a target
/// defines that symbol and calls this; libFuzzer's own driver (`LLVMFuzzerRunDriver`) does the
/// rest — options such as `-max_total_time=60`, a corpus folder, crash files.
public func runFuzzer(
  _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
  _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt {
  var count = argc
  var arguments = argv
  return withUnsafeMutablePointer(to: &count) { count in
    withUnsafeMutablePointer(to: &arguments) { arguments in
      llvmFuzzerRunDriver(count, arguments, test)
    }
  }
}

@_silgen_name("LLVMFuzzerRunDriver")
private func llvmFuzzerRunDriver(
  _ argc: UnsafeMutablePointer<CInt>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
  _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt
