import Foundation

/// A fresh directory under the system's temporary directory, for files a test writes.
struct TemporaryDirectory {
  let path: String

  /// The path of a file in the directory, after writing `contents` to it.
  func write(_ name: String, _ contents: String) throws -> String {
    let file = path + "/" + name
    try contents.write(toFile: file, atomically: true, encoding: .utf8)
    return file
  }

  /// The path of a file in the directory that the test does not create.
  func missing(_ name: String) -> String { path + "/" + name }
}

/// Runs `body` with a new temporary directory and removes the directory afterwards.
func withTemporaryDirectory<Result>(
  _ body: (TemporaryDirectory) async throws -> Result
) async throws -> Result {
  let path = NSTemporaryDirectory() + "/coffer-config-tests-" + UUID().uuidString
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: path) }
  return try await body(TemporaryDirectory(path: path))
}
