import Coffer
import CofferChildProcess
import Foundation

/// A tiny tmpfs mounted for one test, so that a write really runs out of space. Mounting needs
/// root; where it is not permitted, ``mount(in:size:)`` returns `nil` and the test skips.
public struct SmallFileSystem {
  /// Where the file system is mounted.
  public let path: String

  /// Mounts a tmpfs of `size` (as `mount -o size=` takes it: `"256k"`) at a new folder inside
  /// `folder`, or returns `nil` when this process may not mount.
  public static func mount(in folder: TemporaryFolder, size: String) throws -> SmallFileSystem? {
    let path = folder.file("tiny")
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    guard getuid() == 0, run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]) else {
      return nil
    }
    return SmallFileSystem(path: path)
  }

  /// Makes the mounted file system read-only; `false` if that failed.
  public func remountReadOnly() -> Bool { Self.run("/bin/mount", ["-o", "remount,ro", path]) }

  /// Unmounts it.
  public func unmount() { _ = Self.run("/bin/umount", [path]) }

  private static func run(_ tool: String, _ arguments: [String]) -> Bool {
    let child = try? ChildProcess(tool, arguments, standardOutput: .nullDevice, standardError: .nullDevice)
    return child?.waitUntilExit() == .exited(0)
  }
}
