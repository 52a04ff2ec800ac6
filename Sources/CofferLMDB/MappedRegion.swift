import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A file's mapping in this process's address space, as `/proc/self/maps` lists it.
///
/// `@unchecked Sendable`: the address is only ever passed to `madvise`, never dereferenced.
struct MappedRegion: @unchecked Sendable {
  let base: UnsafeMutableRawPointer
  let size: Int

  /// The mapping of the file with this inode that starts at the file's first byte and spans
  /// `size` bytes, or `nil` when there is none (or no `/proc`).
  static func find(inode: UInt64, size: Int) -> MappedRegion? {
    // Read to the end: the kernel reports a size of 0 for the file.
    guard let handle = FileHandle(forReadingAtPath: "/proc/self/maps") else { return nil }
    defer { try? handle.close() }
    guard let data = try? handle.readToEnd() else { return nil }
    for line in data.split(separator: UInt8(ascii: "\n")) {
      if let region = parse(line, inode: inode, size: size) { return region }
    }
    return nil
  }

  /// One line of `/proc/self/maps` (`start-end perms offset dev inode path`) when it maps
  /// the file from its start over `size` bytes.
  static func parse(_ line: some Collection<UInt8>, inode: UInt64, size: Int) -> MappedRegion? {
    let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
    guard fields.count >= 5, UInt64(String(decoding: fields[4], as: UTF8.self)) == inode,
      UInt64(String(decoding: fields[2], as: UTF8.self), radix: 16) == 0
    else { return nil }
    let range = fields[0].split(separator: UInt8(ascii: "-"))
    guard range.count == 2, let start = UInt(String(decoding: range[0], as: UTF8.self), radix: 16),
      let end = UInt(String(decoding: range[1], as: UTF8.self), radix: 16), end > start,
      Int(end - start) == size, let base = UnsafeMutableRawPointer(bitPattern: start)
    else { return nil }
    return MappedRegion(base: base, size: size)
  }
}
