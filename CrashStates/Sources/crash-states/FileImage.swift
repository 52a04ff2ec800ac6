import Foundation

/// The files under the recorded directory as the model sees them: directories, names that
/// point at files (inodes), and each file's bytes. Paths are relative to the recorded
/// directory, which is `""`.
struct FileImage {
  /// Directories, the root (`""`) included.
  var directories: Set<String> = [""]
  /// Each name and the file it points at.
  var names: [String: Int] = [:]
  /// Each file's bytes, by inode.
  var contents: [Int: [UInt8]] = [:]

  /// Files that the engines rebuild at open and never sync, so that no crash state has them:
  /// LMDB's `lock.mdb` and SQLite's `-shm` (both shared-memory files written through a mapping).
  static func isVolatile(_ path: String) -> Bool {
    path == "lock.mdb" || path.hasSuffix("/lock.mdb") || path.hasSuffix("-shm")
  }

  /// The directory holding a path (`""` for one at the root).
  static func parent(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "" }
    return String(path[..<slash])
  }

  /// Applies one change, or the pieces of a write that `sectors` keeps (each a 512-byte-aligned
  /// piece, numbered from the write's first).
  mutating func apply(_ change: Change, sectors: [Bool]? = nil) {
    switch change {
    case .write(let inode, let offset, let bytes):
      var file = contents[inode] ?? []
      for (index, range) in Change.pieces(offset: offset, count: bytes.count).enumerated() {
        if let sectors, !sectors[index] { continue }
        if file.count < range.upperBound {
          file.append(contentsOf: repeatElement(0, count: range.upperBound - file.count))
        }
        file.replaceSubrange(range, with: bytes[(range.lowerBound - offset)..<(range.upperBound - offset)])
      }
      contents[inode] = file
    case .resize(let inode, let size):
      var file = contents[inode] ?? []
      if file.count > size {
        file.removeSubrange(size...)
      } else {
        file.append(contentsOf: repeatElement(0, count: size - file.count))
      }
      contents[inode] = file
    case .link(let path, let inode):
      names[path] = inode
      if contents[inode] == nil { contents[inode] = [] }
    case .unlink(let path, let inode):
      if names[path] == inode { names[path] = nil }
    case .rename(let from, let to, let inode):
      names[to] = inode
      if names[from] == inode { names[from] = nil }
      if contents[inode] == nil { contents[inode] = [] }
    case .makeDirectory(let path):
      directories.insert(path)
    case .removeDirectory(let path):
      directories.remove(path)
    }
  }

  /// Whether a path's parent directories are all present, so that the path can be reached.
  func isReachable(_ path: String) -> Bool {
    var directory = Self.parent(of: path)
    while !directory.isEmpty {
      guard directories.contains(directory) else { return false }
      directory = Self.parent(of: directory)
    }
    return true
  }

  /// The reachable, durable part as files: each directory, and each file's bytes by path.
  /// Volatile files are left out.
  var visible: (directories: [String], files: [(path: String, bytes: [UInt8])]) {
    let shownDirectories = directories.filter { !$0.isEmpty && isReachable($0) }.sorted()
    let files = names.keys.sorted().compactMap { path -> (path: String, bytes: [UInt8])? in
      guard !Self.isVolatile(path), isReachable(path), let inode = names[path] else { return nil }
      return (path, contents[inode] ?? [])
    }
    return (shownDirectories, files)
  }

  /// A 128-bit digest of what ``visible`` holds, naming a crash state for deduplication.
  var digest: StateDigest {
    var digest = StateDigest()
    let shown = visible
    for directory in shown.directories {
      digest.add(Array("d:\(directory)".utf8))
    }
    for file in shown.files {
      digest.add(Array("f:\(file.path)".utf8))
      digest.add(file.bytes)
    }
    return digest
  }

  /// Writes the visible files under `root` (which must exist and be empty), owner-only.
  func materialize(at root: String) throws {
    let shown = visible
    for directory in shown.directories {
      try FileManager.default.createDirectory(
        atPath: root + "/" + directory, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    }
    for file in shown.files {
      let path = root + "/" + file.path
      guard
        FileManager.default.createFile(
          atPath: path, contents: Data(file.bytes), attributes: [.posixPermissions: 0o600])
      else { throw ExplorerFailure("cannot write the crash state's file \(path)") }
    }
  }
}

/// Two 64-bit FNV-1a hashes with different bases, of every byte given with its length.
struct StateDigest: Hashable {
  private var low: UInt64 = 0xcbf2_9ce4_8422_2325
  private var high: UInt64 = 0x6c62_272e_07bb_0142

  /// Adds a length-prefixed byte string.
  mutating func add(_ bytes: [UInt8]) {
    mix(UInt64(bytes.count))
    for byte in bytes {
      low = (low ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
      high = (high ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 &+ 0x9e37
    }
  }

  private mutating func mix(_ value: UInt64) {
    for shift in stride(from: 0, to: 64, by: 8) {
      let byte = (value >> UInt64(shift)) & 0xff
      low = (low ^ byte) &* 0x0000_0100_0000_01b3
      high = (high ^ byte) &* 0x0000_0100_0000_01b3 &+ 0x9e37
    }
  }
}

/// One change to the files, with inodes resolved, as the model replays it.
enum Change {
  /// Bytes written at an offset.
  case write(inode: Int, offset: Int, bytes: [UInt8])
  /// The file made a size (cut, or grown with zeros).
  case resize(inode: Int, size: Int)
  /// A new name for a file (a file created).
  case link(path: String, inode: Int)
  /// A name removed.
  case unlink(path: String, inode: Int)
  /// A file renamed, replacing whatever the new name held.
  case rename(from: String, to: String, inode: Int)
  /// A directory created.
  case makeDirectory(String)
  /// A directory removed.
  case removeDirectory(String)

  /// The size of the sectors a write may be torn at.
  static let sectorSize = 512

  /// A write's pieces: the parts of its range inside each 512-byte-aligned sector of the file.
  static func pieces(offset: Int, count: Int) -> [Range<Int>] {
    var pieces: [Range<Int>] = []
    var start = offset
    while start < offset + count {
      let end = min(offset + count, (start / sectorSize + 1) * sectorSize)
      pieces.append(start..<end)
      start = end
    }
    return pieces
  }

  /// How many pieces the change can be torn into (1 unless it is a write).
  var pieceCount: Int {
    if case .write(_, let offset, let bytes) = self {
      return max(1, Self.pieces(offset: offset, count: bytes.count).count)
    }
    return 1
  }

  /// Whether it changes a file's bytes (rather than names).
  var isData: Bool {
    switch self {
    case .write, .resize: true
    default: false
    }
  }

  /// The inode whose sync makes a data change durable.
  var inode: Int? {
    switch self {
    case .write(let inode, _, _), .resize(let inode, _): inode
    default: nil
    }
  }

  /// The directories whose sync makes a name change durable.
  var directories: Set<String> {
    switch self {
    case .write, .resize: []
    case .link(let path, _), .unlink(let path, _), .makeDirectory(let path), .removeDirectory(let path):
      [FileImage.parent(of: path)]
    case .rename(let from, let to, _): [FileImage.parent(of: from), FileImage.parent(of: to)]
    }
  }
}
