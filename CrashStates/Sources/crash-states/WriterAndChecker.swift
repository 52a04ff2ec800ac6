import Coffer
import CofferStores
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// `crash-states write URL COMMITS`: the recorded writer. Runs under the shim, applies the
/// commits one batch at a time, and marks each in the trace right after `apply` returns.
enum Writer {
  /// The shim's mark function, as C sees it.
  private typealias MarkFunction = @convention(c) (UnsafePointer<CChar>) -> Void

  /// Writes `commits` commits to the store `url`; with `splitsBatches`, each row of a commit in
  /// a batch of its own (a negative control).
  static func run(url: String, commits: Int, splitsBatches: Bool = false) async throws {
    // RTLD_DEFAULT: search every loaded object, the preloaded shim first.
    guard let symbol = dlsym(nil, "crash_shim_mark") else {
      throw ExplorerFailure("the writer runs without the shim (LD_PRELOAD): it would record nothing")
    }
    let mark = unsafeBitCast(symbol, to: MarkFunction.self)
    let store = try await Store.open(url: url)
    for number in 1...Int64(max(commits, 1)) {
      if splitsBatches {
        try await Workload.commitRowByRow(number, to: store)
      } else {
        try await Workload.commit(number, to: store)
      }
      mark("ack \(number)")
    }
    try await store.close()
  }
}

/// `crash-states check URL-TEMPLATE LIST`: opens each crash state the list names (lines of
/// `INDEX<TAB>DIRECTORY`) with the URL template (`{root}` standing for the directory), reads
/// every row, and prints one line per state:
///
/// - `INDEX<TAB>OPENED<TAB>COMPLETE<TAB>PARTIAL<TAB>CORRUPT<TAB>COUNTER` (commit lists comma-separated, `-` for none),
/// - `INDEX<TAB>ERROR<TAB>CODE<TAB>MESSAGE` for a `CofferError`,
/// - `INDEX<TAB>UNTYPED<TAB>TEXT` for any other error.
///
/// A crash or a hang shows as a missing line; the parent finds the state that caused it.
enum Checker {
  /// Checks every state in the list file.
  static func run(template: String, list: String) async throws {
    guard let text = try? String(contentsOfFile: list, encoding: .utf8) else {
      throw ExplorerFailure("cannot read \(list)")
    }
    for line in text.split(separator: "\n") {
      let fields = line.split(separator: "\t", maxSplits: 1).map(String.init)
      guard fields.count == 2 else { continue }
      let url = template.replacingOccurrences(of: "{root}", with: fields[1])
      let answer = await check(url: url)
      FileHandle.standardOutput.write(Data("\(fields[0])\t\(answer)\n".utf8))
    }
  }

  private static func check(url: String) async -> String {
    func flat(_ text: String) -> String {
      text.replacingOccurrences(of: "\t", with: " ").replacingOccurrences(of: "\n", with: " ")
    }
    var opened: Store?
    do {
      let store = try await Store.open(url: url)
      opened = store
      let contents = try await StoreContents(reading: store)
      opened = nil
      try await store.close()
      func list(_ numbers: [Int64]) -> String {
        numbers.isEmpty ? "-" : numbers.map(String.init).joined(separator: ",")
      }
      return
        "OPENED\t\(list(contents.complete))\t\(list(contents.partial))\t\(contents.corrupt)\t"
        + (contents.counter.map(String.init) ?? "-")
    } catch let error as CofferError {
      if let opened { try? await opened.close() }
      return "ERROR\t\(error.code)\t\(flat(error.description))"
    } catch {
      if let opened { try? await opened.close() }
      return "UNTYPED\t\(flat(String(describing: error)))"
    }
  }
}
