import Coffer
import Foundation

/// The lines of a file or of standard input, read in large chunks on a thread of their own (a
/// read that waits for a pipe never blocks the Swift concurrency pool), split at `\n`, each
/// without its line break (and without a `\r` before it).
struct FileLines: AsyncSequence {
  typealias Element = String

  let handle: FileHandle
  /// Bytes asked for per read.
  static let chunkSize = 1 << 20

  func makeAsyncIterator() -> Iterator { Iterator(reader: ChunkReader(handle: handle)) }

  /// Hands out the lines of the chunks read so far, reading the next chunk when they run out.
  struct Iterator: AsyncIteratorProtocol {
    let reader: ChunkReader
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    private var number = 0

    init(reader: ChunkReader) { self.reader = reader }

    mutating func next() async throws -> String? {
      while true {
        if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
          defer { start = newline + 1 }
          return try line(buffer[start..<newline])
        }
        if atEnd {
          guard start < buffer.count else { return nil }
          defer { start = buffer.count }
          return try line(buffer[start...])
        }
        buffer.removeFirst(start)
        start = 0
        let chunk = try await reader.next()
        if chunk.isEmpty { atEnd = true } else { buffer += chunk }
      }
    }

    /// The text of a line, which must be valid UTF-8.
    private mutating func line(_ bytes: ArraySlice<UInt8>) throws -> String {
      number += 1
      let trimmed = bytes.last == UInt8(ascii: "\r") ? bytes.dropLast() : bytes
      guard let text = String(validating: trimmed, as: UTF8.self) else {
        throw CofferError(.invalidInput, "Line \(number) is not valid UTF-8 text.")
      }
      return text
    }
  }

  /// Reads chunks of the file on a queue of its own.
  final class ChunkReader: Sendable {
    let handle: FileHandle
    private let queue = BlockingQueue(label: "coffer.read-lines")

    init(handle: FileHandle) { self.handle = handle }

    /// The next chunk; empty at the end of the file.
    func next() async throws -> [UInt8] {
      let handle = self.handle
      return try await queue.run { [UInt8](try handle.read(upToCount: FileLines.chunkSize) ?? Data()) }
    }
  }
}

/// Writes text to a file or standard output on a thread of its own.
final class TextOutput: Sendable {
  let handle: FileHandle
  private let queue = BlockingQueue(label: "coffer.write-text")

  init(handle: FileHandle) { self.handle = handle }

  func write(_ text: String) async throws {
    let handle = self.handle
    try await queue.run { try handle.write(contentsOf: Data(text.utf8)) }
  }
}
