import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The baseline: the whole store as one Codable value, re-encoded with PropertyListEncoder on
/// every commit and decoded with PropertyListDecoder on open, written with the same durability
/// as Coffer's plist backend (temporary file, fsync, rename, fsync of the directory).
struct NaivePlistStore {
  struct File: Codable { var messages: [ChatMessage] }

  let path: String
  var messages: [ChatMessage]

  static func open(_ path: String) throws -> NaivePlistStore {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return NaivePlistStore(
      path: path, messages: try PropertyListDecoder().decode(File.self, from: data).messages)
  }

  func save() throws {
    let encoder = PropertyListEncoder()
    encoder.outputFormat = .binary
    try DurableFile.replace(path, with: try encoder.encode(File(messages: messages)))
  }
}

enum DurableFile {
  struct Failure: Error { var what: String }

  static func replace(_ path: String, with data: Data) throws {
    let temporary = path + ".tmp"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard descriptor >= 0 else { throw Failure(what: "open \(temporary)") }
    let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard written == data.count, fsync(descriptor) == 0 else {
      close(descriptor)
      throw Failure(what: "write \(temporary)")
    }
    close(descriptor)
    guard rename(temporary, path) == 0 else { throw Failure(what: "rename \(temporary)") }
    let directory = open((path as NSString).deletingLastPathComponent, O_RDONLY)
    if directory >= 0 {
      fsync(directory)
      close(directory)
    }
  }
}
