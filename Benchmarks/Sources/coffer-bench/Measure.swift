import Foundation

/// Timing: run an operation several times, keep the median.
enum Measure {
  static func median(_ samples: [Duration]) -> Duration {
    let sorted = samples.sorted()
    return sorted[sorted.count / 2]
  }

  /// Runs `body` `repetitions` times, each after `setUp`, and returns the median duration.
  static func median(
    repetitions: Int, setUp: () async throws -> Void = {}, _ body: () async throws -> Void
  ) async throws -> Duration {
    var samples: [Duration] = []
    let clock = ContinuousClock()
    for _ in 0..<repetitions {
      try await setUp()
      let start = clock.now
      try await body()
      samples.append(clock.now - start)
    }
    return median(samples)
  }

  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }

  static func milliseconds(_ duration: Duration) -> String {
    String(format: "%.2f ms", seconds(duration) * 1000)
  }
}

/// A scratch folder for one benchmark, removed afterwards.
struct ScratchFolder {
  let path: String
  init(_ name: String) throws {
    path =
      FileManager.default.temporaryDirectory.appendingPathComponent(
        "coffer-bench-\(name)-\(UUID().uuidString)"
      ).path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }
  func remove() { try? FileManager.default.removeItem(atPath: path) }
  func file(_ name: String) -> String { path + "/" + name }
}

/// Where the benchmarks write their reports: `--output`'s folder when given, else the
/// repository's Docs folder.
func reportDirectory(_ output: String?) -> String {
  output
    ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Docs").path
}

/// Writes a report as `name` in ``reportDirectory(_:)`` and says where.
func writeReport(_ text: String, named name: String, to output: String?) throws {
  let path = reportDirectory(output) + "/" + name
  try text.write(toFile: path, atomically: true, encoding: .utf8)
  say("wrote \(path)")
}

/// The command line that runs a benchmark with `arguments`, for the first line of its report.
func benchCommand(_ flag: String, _ arguments: [String]) -> String {
  benchCommand([flag] + arguments)
}

/// The command line that runs `coffer-bench` with `arguments`. A server URL may hold a
/// password: the line names the option, never its value.
func benchCommand(_ arguments: [String]) -> String {
  let shown = arguments.enumerated().map { index, argument in
    index > 0 && arguments[index - 1] == "--postgres-url" ? "URL" : argument
  }
  return "swift run -c release --package-path Benchmarks coffer-bench" + shown.map { " " + $0 }.joined()
}
