#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What this process holds of the machine at one moment: resident memory and open file
/// descriptors, the two figures a soak watches for growth.
struct SoakResources: Sendable, Equatable {
  /// Resident memory in bytes (`/proc/self/statm`), `nil` where there is no `/proc`.
  var residentBytes: Int?
  /// Open file descriptors (the entries of `/proc/self/fd`), `nil` where there is no `/proc`.
  var openFiles: Int?

  /// This process's figures now.
  static func sample() -> SoakResources {
    SoakResources(residentBytes: residentBytes(), openFiles: openFiles())
  }

  /// The lowest of this process's figures sampled every tenth of a second from `start` until
  /// `end`. A file that is open only for a while — a plist store's temporary, open for most of
  /// each commit while the writers keep it busy, a connection being replaced — or memory freed
  /// a moment later shows in some samples but not in the lowest, while a leak raises the lowest
  /// too.
  static func lowest(from start: ContinuousClock.Instant, until end: ContinuousClock.Instant) async
    -> SoakResources
  {
    try? await Task.sleep(until: start, clock: .continuous)
    var lowest = sample()
    while ContinuousClock.now < end {
      try? await Task.sleep(until: min(end, ContinuousClock.now + .milliseconds(100)), clock: .continuous)
      let next = sample()
      lowest.residentBytes = [lowest.residentBytes, next.residentBytes].compactMap { $0 }.min()
      lowest.openFiles = [lowest.openFiles, next.openFiles].compactMap { $0 }.min()
    }
    return lowest
  }

  /// The second field of `/proc/self/statm` (resident pages) times the page size.
  private static func residentBytes() -> Int? {
    let fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { _ = close(fd) }
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    guard count > 0 else { return nil }
    let fields = String(decoding: buffer[..<count], as: UTF8.self).split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
  }

  /// The entries of `/proc/self/fd`, less the one this count opens to read it.
  private static func openFiles() -> Int? {
    guard let directory = opendir("/proc/self/fd") else { return nil }
    defer { closedir(directory) }
    var entries = 0
    while let entry = readdir(directory) {
      let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
        name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
      }
      if !isDot { entries += 1 }
    }
    return entries - 1
  }
}
