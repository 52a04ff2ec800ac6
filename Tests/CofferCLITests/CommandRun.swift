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

  /// Runs `coffer` with arguments and extra environment variables, with `COFFER_STORE` and
  /// `COFFER_CONFIG` removed from the inherited environment unless given, and waits for it.
  static func coffer(_ arguments: [String], environment extra: [String: String] = [:]) throws -> CommandRun {
    let executable = productsDirectory.appendingPathComponent("coffer")
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
      throw MissingExecutable(path: executable.path)
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "coffer-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let outURL = folder.appendingPathComponent("stdout")
    let errURL = folder.appendingPathComponent("stderr")
    try Data().write(to: outURL)
    try Data().write(to: errURL)
    let out = try FileHandle(forWritingTo: outURL)
    let err = try FileHandle(forWritingTo: errURL)

    var environment = ProcessInfo.processInfo.environment
    environment["COFFER_STORE"] = nil
    environment["COFFER_CONFIG"] = nil
    environment.merge(extra) { _, new in new }

    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.environment = environment
    process.currentDirectoryURL = folder
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = out
    process.standardError = err
    try process.run()
    process.waitUntilExit()
    try out.close()
    try err.close()
    return CommandRun(
      status: process.terminationStatus,
      output: try String(contentsOf: outURL, encoding: .utf8),
      errorOutput: try String(contentsOf: errURL, encoding: .utf8))
  }

  struct MissingExecutable: Error, CustomStringConvertible {
    var path: String
    var description: String { "coffer was not built at \(path)" }
  }
}
