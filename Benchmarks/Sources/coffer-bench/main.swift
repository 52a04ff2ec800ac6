import Foundation

/// `coffer-bench [--rows N] [--commits N] [--output DIR] [--no-write]`
///
/// Runs the benchmark suite and writes DIR/Performance.md and DIR/performance.csv (DIR defaults
/// to the repository's Docs folder).
struct Options {
  var rows = 100_000
  var commits = 40
  var naiveCommits = 5
  var repetitions = 5
  var output: String?
  var write = true

  init(_ arguments: [String]) throws {
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      func number() throws -> Int {
        guard let text = iterator.next(), let value = Int(text), value > 0 else {
          throw UsageError(message: "\(argument) needs a positive number")
        }
        return value
      }
      switch argument {
      case "--rows": rows = try number()
      case "--commits": commits = try number()
      case "--naive-commits": naiveCommits = try number()
      case "--repetitions": repetitions = try number()
      case "--output": output = iterator.next()
      case "--no-write": write = false
      default: throw UsageError(message: "unknown argument \(argument)")
      }
    }
  }
}

struct UsageError: Error { var message: String }

func machineDescription() -> String {
  let cores = ProcessInfo.processInfo.activeProcessorCount
  let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
  return String(
    format: "%d cores, %.0f GiB, %@", cores, memory, ProcessInfo.processInfo.operatingSystemVersionString)
}

do {
  let options = try Options(Array(CommandLine.arguments.dropFirst()))
  print("coffer-bench: \(options.rows) rows")
  let plist = PlistBenchmark(
    rows: options.rows, commits: options.commits, naiveCommits: options.naiveCommits,
    repetitions: options.repetitions)
  let results = try await plist.run { print($0) }
  let command =
    "swift run -c release --package-path Benchmarks coffer-bench"
    + (CommandLine.arguments.count > 1 ? " " + CommandLine.arguments.dropFirst().joined(separator: " ") : "")
  let markdown = Report.markdown(results, rows: options.rows, machine: machineDescription(), command: command)
  print(markdown)
  if options.write {
    let benchmarks = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let output = options.output ?? benchmarks.deletingLastPathComponent().appendingPathComponent("Docs").path
    try markdown.write(toFile: output + "/Performance.md", atomically: true, encoding: .utf8)
    try Report.csv(results, rows: options.rows).write(
      toFile: output + "/performance.csv", atomically: true, encoding: .utf8)
    print("Wrote \(output)/Performance.md and \(output)/performance.csv")
  }
} catch let error as UsageError {
  print("coffer-bench: \(error.message)")
  exit(2)
}
