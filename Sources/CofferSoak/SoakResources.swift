#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// What this process holds of the machine at one moment: resident memory and open file
/// descriptors, the figures a soak watches for growth.
///
/// Resident memory is read twice: in all (`VmRSS`) and its anonymous part (`RssAnon`: heap and
/// stacks, what a leak grows). The rest is pages of mapped files — LMDB maps its whole data
/// file, SQLite its WAL index — which grow with the store's file, not with what the process
/// keeps, so growth is judged on the anonymous part.
package struct SoakResources: Sendable, Equatable {
  /// Resident memory in bytes, `nil` where there is no `/proc`.
  package var residentBytes: Int?
  /// The anonymous part of ``residentBytes``, `nil` where there is no `/proc`.
  package var anonymousBytes: Int?
  /// Open file descriptors (the entries of `/proc/self/fd`), `nil` where there is no `/proc`.
  package var openFiles: Int?

  /// Figures with these values; `nil` for those not measured.
  package init(residentBytes: Int? = nil, anonymousBytes: Int? = nil, openFiles: Int? = nil) {
    self.residentBytes = residentBytes
    self.anonymousBytes = anonymousBytes
    self.openFiles = openFiles
  }

  /// This process's figures now.
  package static func sample() -> SoakResources {
    let memory = residentMemory()
    return SoakResources(
      residentBytes: memory["VmRSS"], anonymousBytes: memory["RssAnon"], openFiles: openFiles())
  }

  /// The lowest of this process's figures sampled every tenth of a second from `start` until
  /// `end`. A file that is open only for a while — a plist store's temporary, open for most of
  /// each commit while the writers keep it busy, a connection being replaced — or memory freed
  /// a moment later shows in some samples but not in the lowest, while a leak raises the lowest
  /// too.
  package static func lowest(from start: ContinuousClock.Instant, until end: ContinuousClock.Instant) async
    -> SoakResources
  {
    try? await Task.sleep(until: start, clock: .continuous)
    var lowest = sample()
    while ContinuousClock.now < end {
      try? await Task.sleep(until: min(end, ContinuousClock.now + .milliseconds(100)), clock: .continuous)
      let next = sample()
      lowest.residentBytes = [lowest.residentBytes, next.residentBytes].compactMap { $0 }.min()
      lowest.anonymousBytes = [lowest.anonymousBytes, next.anonymousBytes].compactMap { $0 }.min()
      lowest.openFiles = [lowest.openFiles, next.openFiles].compactMap { $0 }.min()
    }
    return lowest
  }

  /// The `VmRSS` and `RssAnon` lines of `/proc/self/status`, in bytes.
  private static func residentMemory() -> [String: Int] {
    let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return [:] }
    defer { _ = close(fd) }
    var buffer = [UInt8](repeating: 0, count: 8_192)
    var count = 0
    while count < buffer.count {
      let got = buffer[count...].withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if got <= 0 { break }
      count += got
    }
    var memory: [String: Int] = [:]
    for line in String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n") {
      let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
      guard parts.count == 3, parts[2] == "kB", ["VmRSS", "RssAnon"].contains(parts[0]),
        let kibibytes = Int(parts[1])
      else { continue }
      memory[String(parts[0])] = kibibytes * 1_024
    }
    return memory
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
