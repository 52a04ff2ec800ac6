import Coffer
import CofferChildProcess
import Foundation

/// One run of the built `coffer` executable: what it printed and how it ended.
struct CommandRun {
  var status: Int32
  var output: String
  var errorOutput: String

  /// The folder the build put the test bundle in; `coffer` is built next to it.
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
    let executable = productsDirectory.appendingPathComponent("coffer")
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
    var description: String { "coffer was not built at \(path)" }
  }
}
