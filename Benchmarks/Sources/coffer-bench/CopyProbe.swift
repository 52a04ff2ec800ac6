import Coffer
import CofferStores
import CofferTools
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One copy, run in a fresh process so that its memory is the copy's alone: the child opens the
/// source and the target store, resets the kernel's resident high-water mark, runs
/// `StoreCopier.run()` while a thread samples the resident set, and prints a
/// ``CopyMeasurement`` as one line of JSON. The parent (``CopyBenchmark``) never holds the
/// copied rows in the child, so nothing but the copy and the two open stores is resident there.
///
/// `coffer-bench --copy-probe SOURCE_URL TARGET_URL verify|no-verify BATCH|default`
enum CopyProbe {
  static let flag = "--copy-probe"

  /// Runs one copy in a child process and returns what it measured.
  static func measure(source: String, target: String, verify: Bool, batchSize: Int?) throws
    -> CopyMeasurement
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    if !FileManager.default.fileExists(atPath: "/proc/self/exe") {
      process.executableURL = Bundle.main.executableURL
    }
    process.arguments = [
      flag, source, target, verify ? "verify" : "no-verify", batchSize.map(String.init) ?? "default",
    ]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    let last = text.split(separator: "\n").last.map(String.init) ?? ""
    guard process.terminationStatus == 0,
      let measurement = try? JSONDecoder().decode(CopyMeasurement.self, from: Data(last.utf8))
    else {
      throw BenchError("copy of \(source) to \(target) failed: \(text)")
    }
    return measurement
  }

  /// The child's side: `arguments` are the source URL, the target URL, `verify` or
  /// `no-verify`, and the batch size or `default`.
  static func child(_ arguments: [String]) async throws {
    let batchSize = Int(arguments.count == 4 ? arguments[3] : "")
    guard arguments.count == 4, ["verify", "no-verify"].contains(arguments[2]),
      arguments[3] == "default" || (batchSize ?? 0) > 0
    else {
      throw BenchError("usage: coffer-bench \(flag) SOURCE_URL TARGET_URL verify|no-verify BATCH|default")
    }
    let registry = BackendRegistry.makeBuiltIn()
    let clock = ContinuousClock()
    let atStart = ProcessMemory.read()

    let openStart = clock.now
    let source = try await Store.open(url: arguments[0], registry: registry)
    let target = try await Store.open(url: arguments[1], registry: registry)
    let openSeconds = Measure.seconds(clock.now - openStart)

    let opened = ProcessMemory.read()
    let peakWasReset = ProcessMemory.resetPeak()
    let sampler = ResidentSampler()
    sampler.start()
    var copier = StoreCopier(from: source, to: target)
    if let batchSize { copier.batchSize = batchSize }
    copier.verify = arguments[2] == "verify"
    let marks = ProgressMarks()
    let copyStart = clock.now
    let report = try await copier.run(progress: { marks.add($0) })
    let copySeconds = Measure.seconds(clock.now - copyStart)
    let phases = marks.phases()
    let sampled = sampler.stop()
    let afterCopy = ProcessMemory.read()
    try await source.close()
    try await target.close()

    let measurement = CopyMeasurement(
      batchSize: copier.batchSize, rowsCopied: report.rowsCopied, verified: report.isVerified,
      differences: report.differences,
      copySeconds: copySeconds, rowsSeconds: phases.rows, firstTenthSeconds: phases.firstTenth,
      lastTenthSeconds: phases.lastTenth, openSeconds: openSeconds, memoryMeasured: atStart != nil,
      residentAtStart: atStart?.resident ?? 0, peakThroughOpen: opened?.peak ?? 0,
      residentAfterOpen: opened?.resident ?? 0, anonymousAfterOpen: opened?.anonymous ?? 0,
      peakWasReset: peakWasReset, peakDuringCopy: afterCopy?.peak ?? 0,
      sampledResidentPeak: sampled.resident, sampledAnonymousPeak: sampled.anonymous, samples: sampled.count,
      residentAfterCopy: afterCopy?.resident ?? 0, fileMappedAfterCopy: afterCopy?.fileMapped ?? 0)
    let json = try JSONEncoder().encode(measurement)
    FileHandle.standardOutput.write(json + Data("\n".utf8))
  }
}

/// What one copy in a child process measured. Memory figures are bytes, 0 where the system has
/// no `/proc` (then ``memoryMeasured`` is false).
struct CopyMeasurement: Codable, Sendable {
  /// The copier's batch size.
  var batchSize: Int
  /// `CopyReport.rowsCopied`.
  var rowsCopied: Int
  /// `CopyReport.isVerified` (false when verification was off).
  var verified: Bool
  /// `CopyReport.differences`, to show when a verified copy did not match.
  var differences: [String]
  /// Wall time of `StoreCopier.run()`, verification included when on.
  var copySeconds: Double
  /// Time from the start of `run()` to the progress report of its last batch: the rows copied,
  /// without the verification that follows.
  var rowsSeconds: Double
  /// Time the first tenth of the rows took to copy, from the first progress report (before the
  /// first batch) to the one that passed a tenth.
  var firstTenthSeconds: Double
  /// Time the last tenth took: from the report that passed nine tenths to the last one. Beside
  /// ``firstTenthSeconds``, it shows whether a batch's cost depends on how far the copy has gone.
  var lastTenthSeconds: Double
  /// Wall time of opening both stores (`Store.open(url:)`), before the copy and not in its time.
  var openSeconds: Double
  /// Whether the kernel's figures could be read.
  var memoryMeasured: Bool
  /// VmRSS when the child started, before either store was open.
  var residentAtStart: Int64
  /// VmHWM after opening both stores: the peak since the process started.
  var peakThroughOpen: Int64
  /// VmRSS after opening both stores, just before the peak is reset and the copy starts.
  var residentAfterOpen: Int64
  /// RssAnon at the same moment.
  var anonymousAfterOpen: Int64
  /// Whether writing 5 to /proc/self/clear_refs reset VmHWM to the current resident size.
  var peakWasReset: Bool
  /// VmHWM after the copy: the peak since the reset (since the process started if it failed).
  var peakDuringCopy: Int64
  /// The largest resident size the sampling thread saw during the copy.
  var sampledResidentPeak: Int64
  /// The largest anonymous resident size (resident minus file-backed and shared pages) it saw.
  var sampledAnonymousPeak: Int64
  /// How many samples it took.
  var samples: Int
  /// VmRSS after the copy.
  var residentAfterCopy: Int64
  /// RssFile after the copy: pages of mapped files (the LMDB maps) counted in the resident size.
  var fileMappedAfterCopy: Int64

  /// How far the resident high-water mark rose above the resident size the copy started from:
  /// the copy's own growth. Counted from the process's start if the peak could not be reset.
  var residentGrowth: Int64 { peakDuringCopy - (peakWasReset ? residentAfterOpen : residentAtStart) }

  /// How far anonymous memory (the heap: rows, batches, buffers, page caches) rose during the
  /// copy, as sampled: the growth without pages of mapped files.
  var anonymousGrowth: Int64 { sampledAnonymousPeak - anonymousAfterOpen }
}

/// The kernel's memory figures for this process, from `/proc/self/status`, in bytes.
struct ProcessMemory {
  /// VmRSS.
  var resident: Int64
  /// VmHWM: the peak resident size since the process started or the last reset.
  var peak: Int64
  /// RssAnon.
  var anonymous: Int64
  /// RssFile.
  var fileMapped: Int64

  /// The current figures, or nil without `/proc` (not Linux).
  static func read() -> ProcessMemory? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
    var fields: [Substring: Int64] = [:]
    for line in status.split(separator: "\n") {
      let parts = line.split(whereSeparator: { $0 == ":" || $0 == " " || $0 == "\t" })
      if parts.count >= 2, let kilobytes = Int64(parts[1]) { fields[parts[0]] = kilobytes * 1024 }
    }
    guard let resident = fields["VmRSS"], let peak = fields["VmHWM"] else { return nil }
    return ProcessMemory(
      resident: resident, peak: peak, anonymous: fields["RssAnon"] ?? 0, fileMapped: fields["RssFile"] ?? 0)
  }

  /// Resets VmHWM to the current resident size (Linux: 5 written to clear_refs) and says whether
  /// the kernel did: the peak read right after must not exceed the resident size by more than
  /// the little the process allocated meanwhile.
  static func resetPeak() -> Bool {
    guard (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil,
      let after = read()
    else { return false }
    return after.peak <= after.resident + (1 << 20)
  }
}

/// A thread that reads `/proc/self/statm` every 5 ms and keeps the largest resident and
/// anonymous sizes it saw. `statm` is read with plain `read(2)` into a stack buffer, so the
/// sampler itself allocates nothing while it runs.
final class ResidentSampler: Sendable {
  private struct State {
    var stop = false
    var resident: Int64 = 0
    var anonymous: Int64 = 0
    var count = 0
  }

  private let state = Mutex(State())
  private let finished = DispatchSemaphore(value: 0)
  private let pageSize = Int64(sysconf(Int32(_SC_PAGESIZE)))

  /// Starts sampling on a thread of its own.
  func start() {
    let thread = Thread { [self] in
      while !state.withLock({ $0.stop }) {
        if let (resident, shared) = statm() {
          state.withLock { state in
            state.resident = max(state.resident, resident * pageSize)
            state.anonymous = max(state.anonymous, (resident - shared) * pageSize)
            state.count += 1
          }
        }
        usleep(5_000)
      }
      finished.signal()
    }
    thread.start()
  }

  /// Stops sampling and returns the peaks (bytes) and the number of samples.
  func stop() -> (resident: Int64, anonymous: Int64, count: Int) {
    state.withLock { $0.stop = true }
    finished.wait()
    return state.withLock { ($0.resident, $0.anonymous, $0.count) }
  }

  /// The resident and shared (file-backed or shared-memory) page counts of `/proc/self/statm`.
  private func statm() -> (Int64, Int64)? {
    let descriptor = open("/proc/self/statm", O_RDONLY)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer -> (Int64, Int64)? in
      let count = read(descriptor, buffer.baseAddress, buffer.count)
      guard count > 0 else { return nil }
      // Fields: size, resident, shared, …; keep the second and the third.
      var (field, current, inNumber) = (0, Int64(0), false)
      var (resident, shared): (Int64?, Int64?) = (nil, nil)
      for byte in buffer.prefix(count) {
        if byte >= 48 && byte <= 57 {
          current = current * 10 + Int64(byte - 48)
          inNumber = true
        } else if inNumber {
          if field == 1 { resident = current } else if field == 2 { shared = current }
          (field, current, inNumber) = (field + 1, 0, false)
        }
      }
      if inNumber && field == 2 { shared = current }
      guard let resident, let shared else { return nil }
      return (resident, shared)
    }
  }
}

/// The progress reports of one copy, kept to tell how long its parts took.
final class ProgressMarks: Sendable {
  private let marks = Mutex<[(rows: Int, total: Int, elapsed: Double)]>([])

  /// Keeps one report.
  func add(_ progress: CopyProgress) {
    let mark = (progress.rowsCopied, progress.totalRows, Measure.seconds(progress.elapsed))
    marks.withLock { $0.append(mark) }
  }

  /// Seconds to the last report, and the seconds the first and the last tenth of the rows took.
  func phases() -> (rows: Double, firstTenth: Double, lastTenth: Double) {
    marks.withLock { marks in
      guard let first = marks.first, let last = marks.last, last.total > 0 else { return (0, 0, 0) }
      let tenth = marks.first { $0.rows * 10 >= last.total } ?? last
      let nineTenths = marks.first { $0.rows * 10 >= last.total * 9 } ?? last
      return (last.elapsed, tenth.elapsed - first.elapsed, last.elapsed - nineTenths.elapsed)
    }
  }
}
