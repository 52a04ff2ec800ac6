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

  /// The URL of a new store of `engine` (`sqlite`, `lmdb`, `plist`, `memory` or `postgres`)
  /// called `name`: a file in this folder, a named memory store, or the PostgreSQL database
  /// `database` dropped and created anew.
  func storeURL(_ engine: String, named name: String, database: String) throws -> String {
    switch engine {
    case "sqlite": return "sqlite://\(path)/\(name).sqlite"
    case "lmdb": return "lmdb://\(path)/\(name)-lmdb"
    case "plist": return "plist://\(path)/\(name).plist?format=binary"
    case "memory": return "memory:\(name)-\(UUID().uuidString)"
    case "postgres":
      let server = try PostgresDatabase(database)
      try server.recreate()
      return server.url
    default:
      throw UsageError(message: "unknown engine \(engine); use sqlite, lmdb, plist, memory or postgres")
    }
  }
}

/// Where a workload's Coffer system keeps its store: a file of a scheme in the workload's
/// folder (none for `memory:`), or a PostgreSQL database.
struct BenchStoreLocation: Sendable {
  let scheme: String
  let file: String
  let database: String?

  /// A file called `file` (empty for `memory:`) of the backend `scheme`.
  init(scheme: String, file: String) { (self.scheme, self.file, self.database) = (scheme, file, nil) }

  /// The PostgreSQL database `database`.
  init(database: String) { (self.scheme, self.file, self.database) = ("postgres", "", database) }

  /// The URL of an empty store here: the file in `folder` removed, the database made anew.
  func freshURL(in folder: String) throws -> String {
    if let database {
      let server = try PostgresDatabase(database)
      try server.recreate()
      return server.url
    }
    if file.isEmpty { return "\(scheme):" }
    try? FileManager.default.removeItem(atPath: folder + "/" + file)
    return "\(scheme)://" + folder + "/" + file
  }
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
