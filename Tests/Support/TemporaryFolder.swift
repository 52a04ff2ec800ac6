import Foundation

/// A temporary folder for one test, removed when the test ends.
public final class TemporaryFolder {
  /// The folder's absolute path.
  public let path: String

  /// Creates a new, empty folder under the system's temporary directory, named after `prefix`.
  public init(_ prefix: String = "coffer-test") throws {
    path =
      FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  /// The path of a file in the folder.
  public func file(_ name: String) -> String { path + "/" + name }
}
