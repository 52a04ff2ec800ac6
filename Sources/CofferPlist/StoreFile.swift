@_spi(Backend) import Coffer
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The file under a property-list store: reading it, replacing it atomically and durably, and
/// the advisory lock that keeps a second process from writing it.
///
/// A write never touches the existing file until the new one is complete: the bytes go to a
/// temporary file in the same directory, which is flushed to disk, renamed over the store, and
/// then the directory itself is flushed so the rename survives a crash.
struct StoreFile: Sendable {
  let path: String

  var directory: String {
    (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
  }
  var lockPath: String { path + ".lock" }
  /// The store's URL as text: `plist:///absolute/path` or `plist:relative/path`.
  var storeName: String { path.hasPrefix("/") ? "plist://" + path : "plist:" + path }

  func error(_ code: CofferError.Code, _ message: String, errno number: Int32? = nil) -> CofferError {
    var text = message
    if let number { text += " (\(String(cString: strerror(number))))" }
    return CofferError(code, text, store: storeName, path: path)
  }

  /// The file's bytes, or `nil` when there is no file.
  ///
  /// Read with plain `read(2)` into one array; on Linux the array is first marked for huge
  /// pages, which makes filling a buffer of tens of megabytes several times cheaper (a few
  /// hundred page faults instead of thousands).
  func read() throws -> [UInt8]? {
    func failure(_ number: Int32) -> CofferError {
      error(.io, "Could not read the store file \(path). Check that it is a readable file.", errno: number)
    }
    // Without blocking: opening a named pipe for reading would otherwise wait for a writer.
    // The check below refuses anything but a regular file, where the flag changes nothing.
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard descriptor >= 0 else {
      let number = errno
      if number == ENOENT { return nil }
      throw failure(number)
    }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { throw failure(errno) }
    guard (status.st_mode & S_IFMT) == S_IFREG else {
      throw error(
        .io,
        "The store path \(path) is not a regular file (a folder, a named pipe or a device), so it cannot be a plist "
          + "store. Check that the URL names a readable file.")
    }
    let size = Int(status.st_size)
    var number: Int32 = 0
    let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
      count = 0
      guard let base = buffer.baseAddress else { return }
      Self.adviseHugePages(base, size)
      while count < size {
        let got = systemRead(descriptor, base + count, size - count)
        if got < 0, errno == EINTR { continue }
        if got < 0 { number = errno }
        if got <= 0 { return }
        count += got
      }
    }
    guard number == 0 else { throw failure(number) }
    return bytes
  }

  /// Asks for huge pages under the whole 2 MiB blocks of a new buffer (Linux only; elsewhere
  /// and on failure nothing changes).
  private static func adviseHugePages(_ base: UnsafeMutablePointer<UInt8>, _ size: Int) {
    #if os(Linux)
      let block = 2 << 20
      let start = (Int(bitPattern: base) + block - 1) / block * block
      let end = (Int(bitPattern: base) + size) / block * block
      if let pointer = UnsafeMutableRawPointer(bitPattern: start), end > start {
        _ = madvise(pointer, end - start, MADV_HUGEPAGE)
      }
    #endif
  }

  /// Takes the advisory lock that says "a process has this store open for writing" and returns
  /// its descriptor; it is released by ``unlock(_:)`` or when the process ends.
  func lock() throws -> Int32 {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
    else {
      throw error(.io, "The directory \(directory) does not exist. Create it before opening a store in it.")
    }
    // Owner-only, like the store file; never through a link planted at the lock's path.
    let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard descriptor >= 0 else {
      let number = errno
      if number == ELOOP {
        throw error(
          .io, "\(lockPath) is a symbolic link. Coffer does not follow links beside a store; remove it.",
          errno: number)
      }
      throw error(
        number == ENOSPC ? .storageFull : .io,
        "Could not create the lock file \(lockPath). Check that the directory is writable.", errno: number)
    }
    if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
      let number = errno
      close(descriptor)
      if number == EWOULDBLOCK {
        throw error(
          .locked,
          "This store is already open for writing, by another process or by another handle in this process. "
            + "Close that one first, or share one Store: a plist store has one writer at a time."
        )
      }
      throw error(.io, "Could not lock \(lockPath).", errno: number)
    }
    return descriptor
  }

  /// Removes temporary files that a writer killed in the middle of a write left beside the
  /// store. Only called while holding the lock, so no live writer owns them.
  func removeAbandonedTemporaries() {
    let prefix = (path as NSString).lastPathComponent + ".tmp-"
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
    for name in names where name.hasPrefix(prefix) {
      try? FileManager.default.removeItem(atPath: directory + "/" + name)
    }
  }

  func unlock(_ descriptor: Int32) {
    flock(descriptor, LOCK_UN)
    close(descriptor)
  }

  /// Replaces the file with what `body` writes, atomically and durably: `body` hands its bytes
  /// over in pieces to the function it is given, so the new file never needs to be whole in
  /// memory. On any failure, `body`'s included, the existing file is untouched and the temporary
  /// file removed.
  func replace(writing body: (_ write: (UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws {
    let temporary = "\(path).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    // O_EXCL: a new file of our own (never one planted there, nor a link's target); the store
    // may hold private data, so only its owner may read it.
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
    guard descriptor >= 0 else {
      let number = errno
      throw writeError(number, "Could not create a temporary file in \(directory)")
    }
    var closed = false
    defer {
      if !closed { close(descriptor) }
    }
    do {
      try body { buffer in
        var offset = 0
        while offset < buffer.count {
          let written = write(descriptor, buffer.baseAddress?.advanced(by: offset), buffer.count - offset)
          if written < 0 {
            if errno == EINTR { continue }
            throw writeError(errno, "Could not write the store")
          }
          offset += written
        }
      }
      guard fsync(descriptor) == 0 else { throw writeError(errno, "Could not flush the store to disk") }
      closed = true
      guard close(descriptor) == 0 else { throw writeError(errno, "Could not close the new store file") }
      guard rename(temporary, path) == 0 else {
        throw writeError(errno, "Could not move the new store file into place")
      }
    } catch {
      unlink(temporary)
      throw error
    }
    syncDirectory()
  }

  private func syncDirectory() {
    let descriptor = open(directory, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    fsync(descriptor)
    close(descriptor)
  }

  private func writeError(_ number: Int32, _ what: String) -> CofferError {
    switch number {
    case ENOSPC, EDQUOT:
      return error(
        .storageFull, "\(what): the disk is full. Free space and try again; the store file was not changed.",
        errno: number)
    case EACCES, EPERM, EROFS:
      return error(
        .io, "\(what): the directory is not writable. Fix its permissions; the store file was not changed.",
        errno: number)
    default:
      return error(.io, "\(what). The store file was not changed.", errno: number)
    }
  }
}

/// `read(2)`, under a name that ``StoreFile/read()`` does not hide.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
  read(descriptor, buffer, count)
}
