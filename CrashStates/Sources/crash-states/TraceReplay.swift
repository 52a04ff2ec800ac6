import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A moment the power could fail: what was durable then, the changes made but not yet
/// durable (in the order they were made), and the last commit the writer had acknowledged.
struct CrashPoint {
  /// The index of the trace record after which the power fails.
  var record: Int
  /// The files as a power cut leaves them when none of the pending changes reached the disk.
  var durable: FileImage
  /// Changes made but not yet made durable by a sync.
  var pending: [Change]
  /// The last commit acknowledged before this point (0 for none).
  var acknowledged: Int64
}

/// Replays a trace twice over: the files as the writer saw them (`current`) and the part a
/// power cut cannot take away (`durable`).
///
/// The crash model: a write or a size change reaches the disk only when its file is synced
/// (`fsync`, `fdatasync`, or a write through a descriptor opened with `O_SYNC`/`O_DSYNC`); a
/// name created, renamed or removed only when the directory holding it is synced. A file's
/// sync says nothing of its name, nor a directory's sync of its files' bytes. `sync_file_range`
/// and `msync` make nothing durable. `sync()` and `syncfs()` make everything durable.
///
/// With `namesDurableOnFileSync` (the `--names journaled` model), a file's sync also makes
/// every name change made before it durable, as on a file system that commits its whole
/// metadata journal at any fsync (ext4 with `data=ordered`, XFS) — POSIX does not promise it.
struct TraceReplay {
  /// What a descriptor names.
  private enum Handle {
    case file(inode: Int, synchronous: Bool)
    case directory(String)
  }

  /// A change not yet durable, and the directories still to be synced before it is (for a
  /// name change).
  private struct Pending {
    var change: Change
    var directoriesLeft: Set<String>
  }

  /// The recorded directory, resolved.
  let root: String
  /// The files as the writer saw them.
  private(set) var current = FileImage()
  /// The files as a power cut leaves them when nothing pending reached the disk.
  private(set) var durable = FileImage()
  private var pending: [Pending] = []
  /// The last commit the writer acknowledged.
  private(set) var acknowledged: Int64 = 0
  /// What the shim saw and could not record faithfully; the explorer refuses a trace with any.
  private(set) var unhandled: [String] = []
  private var handles: [Int32: Handle] = [:]
  private var nextInode = 1

  /// Whether a file's sync also makes every earlier name change durable.
  let namesDurableOnFileSync: Bool

  /// A replay of a trace of the files under `root`.
  init(root: String, namesDurableOnFileSync: Bool = false) {
    self.root = root
    self.namesDurableOnFileSync = namesDurableOnFileSync
  }

  /// The path relative to the root.
  private func relative(_ path: String) throws -> String {
    if path == root { return "" }
    guard path.hasPrefix(root + "/") else {
      throw ExplorerFailure("the trace names \(path), outside \(root)")
    }
    return String(path.dropFirst(root.count + 1))
  }

  /// Replays one record, calling `crashPoint` for each moment inside or after it at which the
  /// power could fail.
  mutating func replay(_ record: TraceRecord, index: Int, crashPoint: (CrashPoint) throws -> Void) throws {
    func point() throws {
      try crashPoint(
        CrashPoint(
          record: index, durable: durable, pending: pending.map(\.change), acknowledged: acknowledged))
    }
    switch record.kind {
    case .open:
      let path = try relative(record.firstText)
      let flags = Int32(truncatingIfNeeded: record.a)
      if current.directories.contains(path) {
        handles[record.descriptor] = .directory(path)
        return
      }
      let synchronous = flags & O_DSYNC != 0
      if let inode = current.names[path] {
        handles[record.descriptor] = .file(inode: inode, synchronous: synchronous)
        if flags & O_TRUNC != 0, flags & O_ACCMODE != O_RDONLY, current.contents[inode]?.isEmpty == false {
          change(.resize(inode: inode, size: 0))
          try point()
        }
        return
      }
      guard flags & O_CREAT != 0 else {
        throw ExplorerFailure("the trace opens \(path), which the replay does not have")
      }
      let inode = nextInode
      nextInode += 1
      handles[record.descriptor] = .file(inode: inode, synchronous: synchronous)
      change(.link(path: path, inode: inode))
      try point()
    case .write, .truncate:
      guard case .file(let inode, let synchronous) = handles[record.descriptor] else {
        throw ExplorerFailure(
          "record \(index) changes descriptor \(record.descriptor), which names no recorded file")
      }
      if record.kind == .write {
        change(.write(inode: inode, offset: Int(record.a), bytes: record.first))
      } else {
        change(.resize(inode: inode, size: Int(record.a)))
      }
      try point()
      if synchronous {
        syncFile(inode)
        try point()
      }
    case .sync:
      // 0 fsync, 1 fdatasync; 2 sync_file_range and 3 msync make nothing durable.
      guard record.a <= 1 else { return }
      switch handles[record.descriptor] {
      case .file(let inode, _): syncFile(inode)
      case .directory(let path): syncDirectory(path)
      case nil:
        throw ExplorerFailure(
          "record \(index) syncs descriptor \(record.descriptor), which names nothing recorded")
      }
      try point()
    case .close:
      handles[record.descriptor] = nil
    case .rename:
      let from = try relative(record.firstText)
      let to = try relative(record.secondText)
      guard let inode = current.names[from] else {
        throw ExplorerFailure("record \(index) renames \(from), which is not a file the replay has")
      }
      change(.rename(from: from, to: to, inode: inode))
      try point()
    case .unlink:
      let path = try relative(record.firstText)
      guard let inode = current.names[path] else {
        throw ExplorerFailure("record \(index) removes \(path), which is not a file the replay has")
      }
      change(.unlink(path: path, inode: inode))
      try point()
    case .makeDirectory:
      change(.makeDirectory(try relative(record.firstText)))
      try point()
    case .removeDirectory:
      change(.removeDirectory(try relative(record.firstText)))
      try point()
    case .mark:
      let words = record.firstText.split(separator: " ")
      if words.count == 2, words[0] == "ack", let number = Int64(words[1]) { acknowledged = number }
      try point()
    case .syncAll:
      for entry in pending { durable.apply(entry.change) }
      pending = []
      try point()
    case .unhandled:
      let text = record.firstText
      let prefix = "shared writable mapping of "
      if text.hasPrefix(prefix), FileImage.isVolatile(try relative(String(text.dropFirst(prefix.count)))) {
        return
      }
      unhandled.append(text)
    }
  }

  private mutating func change(_ change: Change) {
    current.apply(change)
    pending.append(Pending(change: change, directoriesLeft: change.directories))
  }

  private mutating func syncFile(_ inode: Int) {
    var left: [Pending] = []
    for entry in pending {
      if entry.change.inode == inode || (namesDurableOnFileSync && !entry.change.isData) {
        durable.apply(entry.change)
      } else {
        left.append(entry)
      }
    }
    pending = left
  }

  private mutating func syncDirectory(_ path: String) {
    var left: [Pending] = []
    for var entry in pending {
      if !entry.change.isData, entry.directoriesLeft.remove(path) != nil, entry.directoriesLeft.isEmpty {
        durable.apply(entry.change)
      } else {
        left.append(entry)
      }
    }
    pending = left
  }

  /// The self-check: the replayed files must be the real ones, byte for byte (volatile files
  /// aside), which proves the shim saw every change the writer made.
  func check(against directory: String) throws {
    let shown = current.visible
    var real: [String: [UInt8]] = [:]
    var realDirectories: [String] = []
    guard let enumerator = FileManager.default.enumerator(atPath: directory) else {
      throw ExplorerFailure("cannot list \(directory)")
    }
    while let path = enumerator.nextObject() as? String {
      let full = directory + "/" + path
      var isDirectory: ObjCBool = false
      _ = FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory)
      if isDirectory.boolValue {
        realDirectories.append(path)
      } else if !FileImage.isVolatile(path) {
        guard let data = FileManager.default.contents(atPath: full) else {
          throw ExplorerFailure("cannot read \(full)")
        }
        real[path] = [UInt8](data)
      }
    }
    guard realDirectories.sorted() == shown.directories else {
      throw ExplorerFailure(
        "self-check: the replay has directories \(shown.directories) but the writer left \(realDirectories.sorted())"
      )
    }
    guard Set(real.keys) == Set(shown.files.map(\.path)) else {
      throw ExplorerFailure(
        "self-check: the replay has files \(shown.files.map(\.path)) but the writer left \(real.keys.sorted())"
      )
    }
    for file in shown.files where real[file.path] != file.bytes {
      let actual = real[file.path] ?? []
      let first =
        zip(actual, file.bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(actual.count, file.bytes.count)
      throw ExplorerFailure(
        "self-check: \(file.path) differs from its replay (\(actual.count) bytes on disk, \(file.bytes.count) "
          + "replayed, first difference at byte \(first)): the shim missed a write")
    }
  }
}
