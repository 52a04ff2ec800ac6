import Coffer
import CofferChildProcess
import Foundation

/// One run of the built `coffer` (or `coffer-dev`) executable: what it printed and how it ended.
struct CommandRun {
  var status: Int32
  var output: String
  var errorOutput: String

  /// The folder the build put the test bundle in; `coffer` and `coffer-dev` are built next to it.
  static var productsDirectory: URL {
    #if os(macOS)
      for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
        return bundle.bundleURL.deletingLastPathComponent()
      }
    #endif
    return Bundle.main.bundleURL
  }

  /// Runs `coffer` with arguments, extra environment variables and `input` on its standard
  /// input, with `COFFER_STORE` and `COFFER_CONFIG` removed from the inherited environment unless
  /// given, and waits for it on a thread of its own: a run can take minutes (a whole conformance
  /// suite under a sanitizer), and a wait on the concurrency pool's few threads would hold back
  /// every other test's tasks meanwhile.
  static func coffer(_ arguments: [String], environment extra: [String: String] = [:], input: [UInt8]? = nil)
    async throws -> CommandRun
  {
    try await run("coffer", arguments, environment: extra, input: input)
  }

  /// Runs the harness executable `coffer-dev` (`soak`, `churn`) as ``coffer(_:environment:input:)``
  /// runs `coffer`.
  static func cofferDev(_ arguments: [String], environment extra: [String: String] = [:]) async throws
    -> CommandRun
  {
    try await run("coffer-dev", arguments, environment: extra, input: nil)
  }

  private static func run(
    _ program: String, _ arguments: [String], environment extra: [String: String], input: [UInt8]?
  ) async throws -> CommandRun {
    let executable = productsDirectory.appendingPathComponent(program)
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw MissingExecutable(path: executable.path)
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "coffer-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }

    var environment = ProcessInfo.processInfo.environment
    environment["COFFER_STORE"] = nil
    environment["COFFER_CONFIG"] = nil
    environment.merge(extra) { _, new in new }

    let run = try await ChildProcess.run(
      executable.path, arguments, environment: environment, currentDirectory: folder.path, input: input)
    return CommandRun(status: run.termination.status, output: run.output, errorOutput: run.errors)
  }

  struct MissingExecutable: Error, CustomStringConvertible {
    var path: String
    var description: String { "\(path) was not built" }
  }
}
