import Coffer
@_spi(Fuzzing) import CofferTools
import Foundation

/// Prepares a direct fuzz target before libFuzzer runs it; each target calls this from
/// `LLVMFuzzerInitialize`, which libFuzzer calls first whichever `main` the linker picked.
///
/// With `COFFER_FUZZ_SEEDS=DIR` in the environment it writes the target's seed inputs into
/// `DIR` (one file each, named by `name` and number) and ends the process. Seeds are made from
/// real data where there is some: `COFFER_FUZZ_EXPORT` names a JSON Lines export (the demo
/// store's, which `make fuzz` makes) whose schemas and rows ``Sample/load()`` reads; every
/// target adds rows of every kind (``Sample/everyKind``).
///
/// Otherwise it runs `test` once on each seed, so that globals the decoders and encoders make
/// on first use (which LeakSanitizer cannot always trace) exist before libFuzzer starts
/// counting allocations, and are not taken for a leak of the first input that reaches them.
public func prepareTarget(
  _ name: String, seeds: (Sample) throws -> [[UInt8]],
  test: (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt {
  guard let folder = ProcessInfo.processInfo.environment["COFFER_FUZZ_SEEDS"] else {
    for seed in (try? seeds(Sample.load())) ?? [] {
      _ = seed.withUnsafeBufferPointer { test($0.baseAddress, $0.count) }
    }
    return 0
  }
  do {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let made = try seeds(Sample.load())
    for (number, seed) in made.enumerated() {
      try Data(seed).write(to: URL(fileURLWithPath: "\(folder)/\(name)-\(number)"))
    }
    print("\(name): wrote \(made.count) seeds to \(folder)")
    exit(0)
  } catch {
    print("\(name): could not write seeds: \(error)")
    exit(1)
  }
}

/// The bytes libFuzzer hands a target, as an array.
public func inputBytes(_ start: UnsafePointer<UInt8>?, _ count: Int) -> [UInt8] {
  start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
}

/// Stops the process with the property that failed; libFuzzer saves the input as a crash.
public func violated(_ property: String, _ details: @autoclosure () -> String = "") -> Never {
  fatalError("property violated: \(property) \(details())")
}

/// Stops the process for an error other than a `CofferError`, which no decoder may throw.
public func unexpected(_ error: any Error, from decoder: String) -> Never {
  fatalError("\(decoder) threw a non-Coffer error: \(String(reflecting: error))")
}

/// Whether two values are the same stored value: `==`, and also two NaNs (which `==` never
/// calls equal).
public func same(_ lhs: Value, _ rhs: Value) -> Bool {
  if case .double(let a) = lhs, case .double(let b) = rhs, a.isNaN, b.isNaN { return true }
  return lhs == rhs
}

/// Whether two rows hold the same values (``same(_:_:)``).
public func same(_ lhs: [Value], _ rhs: [Value]) -> Bool {
  lhs.count == rhs.count && zip(lhs, rhs).allSatisfy { same($0, $1) }
}

/// Whether two migration records are the same step: name, position and rows, and the time
/// to the millisecond (what every store keeps of it).
public func same(_ lhs: MigrationRecord, _ rhs: MigrationRecord) -> Bool {
  func milliseconds(_ date: Date) -> Double { (date.timeIntervalSince1970 * 1000).rounded() }
  return lhs.name == rhs.name && lhs.position == rhs.position && lhs.rowsTouched == rhs.rowsTouched
    && milliseconds(lhs.appliedAt) == milliseconds(rhs.appliedAt)
}

/// Schemas and rows the seeds are made from.
public struct Sample: Sendable {
  /// Each entity's schema and rows.
  public var entities: [(schema: EntitySchema, rows: [Row])]

  /// The entities of the export `COFFER_FUZZ_EXPORT` names (none without it), then
  /// ``everyKind``.
  public static func load() throws -> Sample {
    var entities: [(schema: EntitySchema, rows: [Row])] = []
    if let path = ProcessInfo.processInfo.environment["COFFER_FUZZ_EXPORT"] {
      let text = try String(contentsOfFile: path, encoding: .utf8)
      var schema = everyKind.schema
      for line in text.split(separator: "\n") {
        switch try ImportFuzzing.parseLine(String(line), rowsOf: schema) {
        case .header(let header, _):
          schema = header
          entities.append((header, []))
        case .row(let row): entities[entities.count - 1].rows.append(row)
        default: break
        }
      }
    }
    entities.append(everyKind)
    return Sample(entities: entities)
  }

  /// An entity with a field of every kind, optional ones and indexes, and rows that use them.
  public static let everyKind: (schema: EntitySchema, rows: [Row]) = {
    let fields = [
      Field("id", .int), Field("name", .string), Field("score", .double, isOptional: true),
      Field("done", .bool, default: .bool(false)), Field("count", .int, isOptional: true),
      Field("blob", .bytes, isOptional: true),
      Field("when", .date, default: .date(Date(timeIntervalSince1970: 0))),
      Field("ref", .uuid, isOptional: true),
      Field("info", .document, isOptional: true), Field("note", .string, isOptional: true),
    ]
    let indexes = [Index(["name"], isUnique: true), Index(["when", "score"])]
    guard let schema = try? EntitySchema(name: "Sample", fields: fields, idField: "id", indexes: indexes)
    else {
      fatalError("the sample schema is invalid")
    }
    let when = Date(timeIntervalSince1970: 1_750_000_000.123456)
    let rows = [
      Row([
        .int(1), .string("first"), .double(2.5), .bool(true), .int(-7), .bytes(Data([0, 1, 255])),
        .date(when), .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
        .document(Data(#"{"a":[1,2]}"#.utf8)), .string("naïve café ☕"),
      ]),
      Row([
        .int(-9_000_000_000), .string("sec\u{0}ond"), .null, .bool(false), .null, .null,
        .date(Date(timeIntervalSince1970: -1)), .null, .null, .null,
      ]),
      Row([
        .int(Int64.max), .string(""), .double(-0.0), .bool(false), .int(Int64.min), .bytes(Data()),
        .date(when), .null, .document(Data("[]".utf8)), .string("\"quoted\"\n\t"),
      ]),
    ]
    return (schema, rows)
  }()
}
