import Foundation

/// Peak memory of a bulk insert, measured in a fresh process so that nothing an earlier system
/// allocated counts: the child makes the messages, resets the kernel's high-water mark, inserts
/// them into a new store and prints the process's peak resident size (which includes the
/// messages themselves, as an app holding them would).
enum MemoryProbe {
  static let flag = "--memory-probe"

  /// Runs `coffer-bench --memory-probe KEY ROWS` and returns the bytes it reports.
  static func measure(system key: String, rows: Int) throws -> Int64 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    if !FileManager.default.fileExists(atPath: "/proc/self/exe") {
      process.executableURL = Bundle.main.executableURL
    }
    process.arguments = [flag, key, String(rows)]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard process.terminationStatus == 0, let bytes = Int64(text) else {
      throw BenchError("memory probe for \(key) at \(rows) rows failed: \(text)")
    }
    return bytes
  }

  /// The child's side: `arguments` are the key and the row count.
  static func child(_ arguments: [String]) async throws {
    guard arguments.count == 2, let rows = Int(arguments[1]), let system = SystemCatalog.make(arguments[0])
    else {
      throw BenchError("usage: coffer-bench \(flag) SYSTEM ROWS")
    }
    let messages = Workload.messages(rows)
    let folder = try ScratchFolder("memory")
    defer { folder.remove() }
    try await system.create(in: folder.path)
    resetPeak()
    try await system.bulkInsert(messages)
    let peak = peakResidentBytes()
    try await system.close()
    print(peak)
    withExtendedLifetime(messages) {}
  }

  /// Resets the peak resident size the kernel keeps (Linux: writing 5 to clear_refs).
  private static func resetPeak() {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
  }

  /// The peak resident size: VmHWM on Linux, ru_maxrss elsewhere.
  private static func peakResidentBytes() -> Int64 {
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
      let kilobytes = Int64(line.split(separator: " ").dropFirst().first ?? "")
    {
      return kilobytes * 1024
    }
    var usage = rusage()
    #if os(Linux)
      getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
      getrusage(RUSAGE_SELF, &usage)
    #endif
    return Int64(usage.ru_maxrss) * 1024
  }
}
