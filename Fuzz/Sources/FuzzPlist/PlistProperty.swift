@_spi(Backend) import Coffer
@_spi(Fuzzing) import CofferPlist
import Foundation
import FuzzSupport

/// The property both plist targets check: bytes that decode as a store file of `format` must
/// decode to the same store after being written again in either format; bytes that do not must
/// throw a `CofferError`.
public func checkPlist(_ bytes: [UInt8], format: PlistBackend.Format) {
  let image: PlistFuzzing.Image
  do {
    image = try format == .binary ? PlistFuzzing.decodeBinary(bytes) : PlistFuzzing.decodeXML(bytes)
  } catch is CofferError {
    return
  } catch {
    unexpected(error, from: "decoding a \(format) plist store")
  }
  guard image.format == format else { violated("a \(format) file decoded as \(image.format)") }
  for written in PlistBackend.Format.allCases {
    let again: PlistFuzzing.Image
    do {
      let encoded = PlistFuzzing.encode(image, format: written)
      if let dump = ProcessInfo.processInfo.environment["COFFER_FUZZ_DUMP"] {
        try? Data(encoded).write(to: URL(fileURLWithPath: dump + "-\(written)"))
      }
      again = try written == .binary ? PlistFuzzing.decodeBinary(encoded) : PlistFuzzing.decodeXML(encoded)
    } catch {
      violated("a decoded store written again as \(written) does not decode", "\(error)")
    }
    guard sameStore(image, again) else {
      if ProcessInfo.processInfo.environment["COFFER_FUZZ_VERBOSE"] != nil {
        print("first:", image.schemas, image.rows, image.migrations)
        print("again:", again.schemas, again.rows, again.migrations)
      }
      violated("a decoded store written again as \(written) decodes otherwise")
    }
  }
}

/// Whether two decoded stores hold the same schemas, rows (NaN equal to NaN) and migrations.
private func sameStore(_ lhs: PlistFuzzing.Image, _ rhs: PlistFuzzing.Image) -> Bool {
  guard lhs.schemas == rhs.schemas, lhs.migrations.count == rhs.migrations.count,
    zip(lhs.migrations, rhs.migrations).allSatisfy({ same($0, $1) }), lhs.rows.count == rhs.rows.count
  else {
    return false
  }
  for (entity, rows) in lhs.rows {
    guard let other = rhs.rows[entity], other.count == rows.count,
      zip(rows, other).allSatisfy({ same($0.values, $1.values) })
    else { return false }
  }
  return true
}

/// Seed files of `format`: the sample's entities written by the plist writer.
public func plistSeeds(_ sample: Sample, format: PlistBackend.Format) -> [[UInt8]] {
  let everything = PlistFuzzing.Image(
    format: format, schemas: sample.entities.map(\.schema),
    rows: Dictionary(
      sample.entities.map { ($0.schema.name, $0.rows) }, uniquingKeysWith: { first, _ in first }),
    migrations: [
      MigrationRecord(
        name: "first", position: 0, appliedAt: Date(timeIntervalSince1970: 1_750_000_000), rowsTouched: 3)
    ])
  var seeds = [PlistFuzzing.encode(everything, format: format)]
  for entity in sample.entities {
    var one = everything
    one.schemas = [entity.schema]
    one.rows = [entity.schema.name: Array(entity.rows.prefix(2))]
    one.migrations = []
    seeds.append(PlistFuzzing.encode(one, format: format))
  }
  return seeds
}
