import Foundation

/// One record of a trace written by the shim (`Shim/crash-shim.c`, which documents the layout).
struct TraceRecord {
  /// What the recorded call did.
  enum Kind: UInt32 {
    case open = 1, write = 2, truncate = 3, sync = 5, close = 6, rename = 7, unlink = 8
    case makeDirectory = 9, removeDirectory = 10, mark = 11, syncAll = 13, unhandled = 14
  }

  /// What the recorded call did.
  var kind: Kind
  /// The descriptor it used, or -1.
  var descriptor: Int32
  /// Open flags, a write's offset, a new size, or how a sync was asked for.
  var a: Int64
  /// The first payload: a path, a write's bytes, or a mark's text.
  var first: [UInt8]
  /// The second payload: a rename's new path.
  var second: [UInt8]

  /// The first payload as text.
  var firstText: String { String(decoding: first, as: UTF8.self) }
  /// The second payload as text.
  var secondText: String { String(decoding: second, as: UTF8.self) }

  /// Reads a whole trace file.
  static func read(_ path: String) throws -> [TraceRecord] {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw ExplorerFailure("cannot read the trace \(path)")
    }
    let bytes = [UInt8](data)
    var records: [TraceRecord] = []
    var at = 0
    func integer<T: FixedWidthInteger>(_ type: T.Type, _ offset: Int) -> T {
      var value: T = 0
      for index in 0..<MemoryLayout<T>.size {
        value |= T(truncatingIfNeeded: bytes[offset + index]) << (8 * index)
      }
      return value
    }
    while at < bytes.count {
      guard at + 32 <= bytes.count else { throw ExplorerFailure("the trace ends inside a record header") }
      let rawKind = integer(UInt32.self, at)
      let firstLength = Int(integer(UInt32.self, at + 24))
      let secondLength = Int(integer(UInt32.self, at + 28))
      guard let kind = Kind(rawValue: rawKind) else {
        throw ExplorerFailure("unknown trace record \(rawKind)")
      }
      let start = at + 32
      guard start + firstLength + secondLength <= bytes.count else {
        throw ExplorerFailure("the trace ends inside a record")
      }
      records.append(
        TraceRecord(
          kind: kind, descriptor: integer(Int32.self, at + 4), a: integer(Int64.self, at + 8),
          first: Array(bytes[start..<start + firstLength]),
          second: Array(bytes[start + firstLength..<start + firstLength + secondLength])))
      at = start + firstLength + secondLength
    }
    return records
  }
}

/// A failure of the explorer itself (a bad trace, a self-check that does not hold): it stops
/// the run, since no count would mean anything after it.
struct ExplorerFailure: Error, CustomStringConvertible {
  /// What went wrong.
  var description: String
  /// A failure described by `description`.
  init(_ description: String) { self.description = description }
}
