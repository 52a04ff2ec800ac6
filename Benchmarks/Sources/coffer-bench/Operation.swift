import Foundation

/// What the suite measures for every system at every size.
enum Operation: String, CaseIterable {
  case bulkInsert = "bulk insert"
  case pointGet = "point gets"
  case concurrentGets = "concurrent point gets"
  case threadPage = "thread pages"
  case fullScan = "full scan"
  case update = "update 10%"
  case commit = "single-row durable commit"
  case peakMemory = "peak memory (bulk insert)"
  case fileSize = "file size"

  /// How the operation is counted, for table headings.
  func detail(rows: Int, gets: Int, pages: Int) -> String {
    switch self {
    case .bulkInsert: "\(rows.formatted()) rows in one batch"
    case .pointGet: "per get, mean of up to \(gets.formatted())"
    case .concurrentGets:
      "\(Suite.getters) tasks at once, gets per second in total, up to \(gets.formatted())"
    case .threadPage: "per page of the newest 50 in a thread, mean of up to \(pages.formatted())"
    case .fullScan: "every row decoded"
    case .update: "\((rows / 10).formatted()) rows in one batch"
    case .commit: "per commit (median)"
    case .peakMemory: "whole process, fresh process"
    case .fileSize: "on disk after close"
    }
  }

  var isTime: Bool { self != .peakMemory && self != .fileSize }

  /// Whether the figure is a throughput: the suite keeps the time per call over all tasks, and
  /// the report shows its inverse, calls per second.
  var isThroughput: Bool { self == .concurrentGets }
}

/// One figure: a median time in seconds (for a throughput, the time per call over all tasks),
/// or a size in bytes.
struct Result {
  var operation: Operation
  var system: String
  var rows: Int
  var value: Double
}
