@_spi(Backend) import Coffer
import CofferMacros
import Foundation

/// The row codec `@Storable` generates against the one derived from `Codable`: every message
/// of the workload encoded to a row, and every row decoded back, by each.
///
/// ```swift
/// let codec = try await CodecBenchmark.run(rows: 1_000_000, repetitions: 5) { print($0) }
/// print(CodecBenchmark.markdown(codec, rows: 1_000_000))
/// ```
enum CodecBenchmark {
  /// The system names in results.
  static let generated = "@Storable codec"
  static let codable = "Codable codec"

  /// Encodes `rows` workload messages to rows and decodes them back with each codec, timing
  /// each pass `repetitions` times. Returns the medians as results with operation `"encode"` or
  /// `"decode"` and system ``generated`` or ``codable``, and logs each as it is measured.
  ///
  /// - Throws: if a codec fails, or if the two codecs disagree on a row or a decoded value
  ///   (checked once, before timing).
  static func run(rows: Int = 1_000_000, repetitions: Int = 5, log: (String) -> Void) async throws
    -> [PlistBenchmark.Result]
  {
    let plain = Workload.messages(rows)
    let viaCodable = try EntityCodec<ChatMessage>(using: .codable)
    let viaGenerated = try EntityCodec<ChatMessage>(using: .generated)
    guard viaGenerated.usesGeneratedCode, viaGenerated.schema == viaCodable.schema else {
      throw CodecMismatch(message: "the @Storable codec does not have the Codable codec's schema")
    }
    for index in [0, rows / 2, rows - 1] where plain.indices.contains(index) {
      let row = try viaCodable.encode(plain[index])
      // Both codecs store a date to the microsecond, so the message comes back with its date so rounded.
      var stored = plain[index]
      stored.date = Value.normalized(stored.date)
      guard try viaGenerated.encode(plain[index]) == row, try viaGenerated.decode(row) == stored,
        try viaCodable.decode(row) == stored
      else {
        throw CodecMismatch(message: "the codecs disagree on message \(index + 1)")
      }
    }

    var results: [PlistBenchmark.Result] = []
    func record(_ operation: String, _ system: String, _ median: Duration) {
      results.append(PlistBenchmark.Result(operation: operation, system: system, median: median))
      log("  \(operation) — \(system): \(Measure.milliseconds(median))")
    }
    record("encode", generated, try await median(repetitions) { try encodeAll(plain, viaGenerated) })
    record("encode", codable, try await median(repetitions) { try encodeAll(plain, viaCodable) })
    let encoded = try encodeAll(plain, viaCodable)
    record("decode", generated, try await median(repetitions) { try decodeAll(encoded, viaGenerated) })
    record("decode", codable, try await median(repetitions) { try decodeAll(encoded, viaCodable) })
    return results
  }

  /// A Markdown section with one row per result and the Codable codec's time over the
  /// generated one's (how many times faster `@Storable` is).
  static func markdown(_ results: [PlistBenchmark.Result], rows: Int) -> String {
    var lines = [
      "## Row codec (\(rows.formatted()) chat messages)",
      "",
      "Each message encoded to a row and each row decoded back, in memory, by the code `@Storable`",
      "generates and by the codec derived from `Codable`. A speed-up above 1 means `@Storable` is faster.",
      "",
      "| operation | system | median | speed-up of @Storable |",
      "|---|---|---:|---:|",
    ]
    for result in results {
      var speedUp = ""
      if result.system == generated,
        let theirs = results.first(where: { $0.operation == result.operation && $0.system == codable })
      {
        speedUp = String(format: "%.2fx", ratio(theirs.median, result.median))
      }
      lines.append(
        "| \(result.operation) | \(result.system) | \(Measure.milliseconds(result.median)) | \(speedUp) |")
    }
    lines.append("")
    return lines.joined(separator: "\n")
  }

  private static func ratio(_ numerator: Duration, _ denominator: Duration) -> Double {
    Measure.seconds(numerator) / Measure.seconds(denominator)
  }

  private static func median(_ repetitions: Int, _ body: () throws -> Void) async throws -> Duration {
    try await Measure.median(repetitions: repetitions) { try body() }
  }

  @discardableResult
  private static func encodeAll<T: Storable>(_ values: [T], _ codec: EntityCodec<T>) throws -> [Row] {
    var rows: [Row] = []
    rows.reserveCapacity(values.count)
    for value in values { rows.append(try codec.encode(value)) }
    return rows
  }

  private static func decodeAll<T: Storable>(_ rows: [Row], _ codec: EntityCodec<T>) throws {
    var values: [T] = []
    values.reserveCapacity(rows.count)
    for row in rows { values.append(try codec.decode(row)) }
    guard values.count == rows.count else { throw CodecMismatch(message: "decoded \(values.count) rows") }
  }
}

/// The two codecs did not agree, so timing them would compare different work.
struct CodecMismatch: Error { var message: String }
