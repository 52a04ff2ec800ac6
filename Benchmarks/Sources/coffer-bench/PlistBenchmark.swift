@_spi(Backend) import Coffer
import CofferPlist
import Foundation

/// The property-list backend against a plain PropertyListEncoder/Decoder full rewrite, on the
/// same messages, in the same run.
struct PlistBenchmark {
  struct Result {
    var operation: String
    var system: String
    var median: Duration
  }

  let rows: Int
  let commits: Int
  let naiveCommits: Int
  let repetitions: Int

  func run(log: (String) -> Void) async throws -> [Result] {
    let messages = Workload.messages(rows)
    var results: [Result] = []
    func record(_ operation: String, _ system: String, _ median: Duration) {
      results.append(Result(operation: operation, system: system, median: median))
      log("  \(operation) — \(system): \(Measure.milliseconds(median))")
    }

    // Bulk insert of all rows in one batch into a new store.
    for format in PlistBackend.Format.allCases {
      let folder = try ScratchFolder("plist-bulk")
      defer { folder.remove() }
      var attempt = 0
      let median = try await Measure.median(repetitions: repetitions) {
        attempt += 1
        let backend = try PlistBackend(
          path: folder.file("store-\(attempt).plist"), configuration: .init(format: format))
        let store = Store(backend: backend)
        try await store.insert(messages)
        try await store.close()
      }
      record("bulk insert", "Coffer plist (\(format.rawValue))", median)
    }
    do {
      let folder = try ScratchFolder("naive-bulk")
      defer { folder.remove() }
      let median = try await Measure.median(repetitions: repetitions) {
        try NaivePlistStore(path: folder.file("naive.plist"), messages: messages).save()
      }
      record("bulk insert", "PropertyListEncoder rewrite", median)
    }

    // Opening a store of all rows, and single-row durable commits on it.
    for format in PlistBackend.Format.allCases {
      let folder = try ScratchFolder("plist-open")
      defer { folder.remove() }
      let path = folder.file("store.plist")
      do {
        let store = Store(backend: try PlistBackend(path: path, configuration: .init(format: format)))
        try await store.insert(messages)
        try await store.close()
      }
      let open = try await Measure.median(repetitions: repetitions) {
        let backend = try PlistBackend(path: path)
        try await backend.close()
      }
      record("open", "Coffer plist (\(format.rawValue))", open)

      let store = Store(backend: try PlistBackend(path: path))
      var random = SplitMix64(state: 7)
      let commit = try await Measure.median(repetitions: commits) {
        var message = messages[random.below(messages.count)]
        message.isRead.toggle()
        try await store.update(message)
      }
      try await store.close()
      record("single-row durable commit", "Coffer plist (\(format.rawValue))", commit)
    }
    do {
      let folder = try ScratchFolder("naive-open")
      defer { folder.remove() }
      let path = folder.file("naive.plist")
      try NaivePlistStore(path: path, messages: messages).save()
      let open = try await Measure.median(repetitions: repetitions) { _ = try NaivePlistStore.open(path) }
      record("open", "PropertyListDecoder", open)

      var naive = try NaivePlistStore.open(path)
      var random = SplitMix64(state: 7)
      let commit = try await Measure.median(repetitions: naiveCommits) {
        let index = random.below(naive.messages.count)
        naive.messages[index].isRead.toggle()
        try naive.save()
      }
      record("single-row durable commit", "PropertyListEncoder rewrite", commit)
    }
    return results
  }
}
