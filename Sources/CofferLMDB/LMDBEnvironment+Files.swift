import CLMDB
@_spi(Backend) import Coffer
import Foundation

extension LMDBEnvironment {
  /// Creates the store directory if it is missing, and refuses a path that is a file or a
  /// directory holding other things than an LMDB store.
  static func prepareDirectory(_ path: String, _ context: StoreContext) throws {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      do {
        // Owner-only: a store may hold private data.
        try FileManager.default.createDirectory(
          atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
      } catch {
        throw CofferError(
          .io,
          "Could not create the store directory: \(error.localizedDescription). Check the path and permissions.",
          store: context.name, path: path, underlying: error)
      }
      return
    }
    guard isDirectory.boolValue else {
      throw CofferError(
        .corruptStore,
        "This path is a file, but an lmdb: store is a directory (holding data.mdb and lock.mdb). "
          + "Name a new or empty directory; the file was left untouched.",
        store: context.name, path: path)
    }
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    let foreign = entries.filter { $0 != "data.mdb" && $0 != "lock.mdb" && !$0.hasPrefix(".") }
    if !entries.contains("data.mdb"), !foreign.isEmpty {
      throw CofferError(
        .corruptStore,
        "This directory is not an LMDB store: it has no data.mdb but holds other files (\(foreign.count)). "
          + "Name a new or empty directory for the store; nothing in it was changed.",
        store: context.name, path: path)
    }
    if entries.contains("data.mdb") { try refuseEmptyDataFile(path + "/data.mdb", context) }
  }

  /// Refuses a data file of zero bytes, which liblmdb would take for a new store and write
  /// over. A process creating the store right now has an empty file for a moment, so this
  /// waits up to 0.2 s for it to fill before refusing.
  private static func refuseEmptyDataFile(_ dataPath: String, _ context: StoreContext) throws {
    for _ in 0..<20 {
      guard (try? FileManager.default.attributesOfItem(atPath: dataPath))?[.size] as? Int == 0 else { return }
      usleep(10_000)
    }
    throw CofferError(
      .corruptStore,
      "data.mdb is empty (0 bytes): another program emptied it, or the machine stopped while the store was "
        + "being created, before its first commit. It was left untouched. Restore the directory from a backup, "
        + "or, if nothing was ever stored there, delete data.mdb to start a new store there.",
      store: context.name, path: dataPath)
  }

  /// Flushes a new store's directory (holding the name `data.mdb`) and the directory above it
  /// (holding the store directory's name) to disk, so that the store's files are still found
  /// after a power cut. POSIX makes a new name durable only when its directory is synced; best
  /// effort, since a failure here leaves the store exactly as usable as before.
  static func syncNames(of path: String) {
    let parent = (path as NSString).deletingLastPathComponent
    for directory in [path, parent.isEmpty ? "." : parent] {
      let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
      guard descriptor >= 0 else { continue }
      fsync(descriptor)
      closeDescriptor(descriptor)
    }
  }

  /// Whether the file system holding `path` has (next to) no room left: liblmdb reports a write
  /// cut short by a full disk as an I/O error, not as `ENOSPC`.
  static func isDiskFull(_ path: String) -> Bool {
    var stats = statvfs()
    guard statvfs(path, &stats) == 0 else { return false }
    return UInt64(stats.f_bavail) * UInt64(stats.f_frsize) < 64 << 10
  }

  /// Refuses a data file shorter than the pages its header says are in use (a truncated copy),
  /// which liblmdb would otherwise fault on when reading past its end.
  ///
  /// The header's last page is the highest ever allocated, but a page allocated and freed again
  /// within one transaction is never written, so a sound file may end before it. When it does,
  /// the pages at the end that the free-page database lists are not needed; the rest must be there.
  static func checkLength(_ handle: OpaquePointer, path: String, context: StoreContext) throws {
    var stat = MDB_stat()
    try context.check(mdb_env_stat(handle, &stat), "read the store's header")
    // A read transaction keeps the snapshot it reads, and its free pages, from being reused.
    var reader: OpaquePointer?
    try context.check(mdb_txn_begin(handle, nil, UInt32(MDB_RDONLY), &reader), "read the store's header")
    defer { mdb_txn_abort(reader) }
    var info = MDB_envinfo()
    try context.check(mdb_env_info(handle, &info), "read the store's header")
    let pageSize = Int(stat.ms_psize)
    let dataPath = path + "/data.mdb"
    let length = (try? FileManager.default.attributesOfItem(atPath: dataPath)[.size] as? Int) ?? 0
    var needed = (info.me_last_pgno + 1) * pageSize
    if length < needed, let reader, let file = LMDBPageFile(path: dataPath, pageSize: pageSize),
      let lastInUse = file.lastPageInUse(txnid: Int(mdb_txn_id(reader)), lastPage: info.me_last_pgno)
    {
      needed = (lastInUse + 1) * pageSize
    }
    if length < needed {
      throw CofferError(
        .corruptStore,
        "data.mdb is truncated: it holds \(length) bytes but its pages need \(needed). It was left untouched; "
          + "restore the directory from a backup.",
        store: context.name, path: dataPath)
    }
  }
}

/// Sizes as people write them in options: `64MiB`, `1GiB`, `4096`.
enum ByteSize {
  /// Parses a byte count with an optional unit (`KiB`, `MiB`, `GiB`, `TiB`, or `K`, `M`, `G`,
  /// `T`, `KB`, `MB`, `GB`, `TB`, all binary); `nil` for anything else.
  static func parse(_ text: String) -> Int? {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    let digits = trimmed.prefix { $0.isASCII && $0.isNumber }
    guard !digits.isEmpty, let number = Int(digits) else { return nil }
    let unit = trimmed.dropFirst(digits.count).lowercased()
    let shift: Int
    switch unit {
    case "", "b": shift = 0
    case "k", "kb", "kib": shift = 10
    case "m", "mb", "mib": shift = 20
    case "g", "gb", "gib": shift = 30
    case "t", "tb", "tib": shift = 40
    default: return nil
    }
    let (result, overflow) = number.multipliedReportingOverflow(by: 1 << shift)
    return overflow ? nil : result
  }

  /// A size in the largest binary unit that divides it: `64 MiB` (or `64MiB` when compact).
  static func format(_ bytes: Int, compact: Bool = false) -> String {
    let units = [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")]
    for (shift, name) in units where bytes >= 1 << shift && bytes % (1 << shift) == 0 {
      return "\(bytes >> shift)\(compact ? "" : " ")\(name)"
    }
    return compact ? "\(bytes)" : "\(bytes) bytes"
  }
}

/// `close(2)`, under a name that ``LMDBEnvironment/close()`` does not hide.
private func closeDescriptor(_ descriptor: Int32) {
  close(descriptor)
}
