/// SipHash-2-4 with a 128-bit output, fed incrementally: the keyed hash under ``StoreDigest``.
///
/// Written out here rather than taken from `Hasher`, whose seed changes with every process: a
/// digest must come out the same in every process, on every machine and in every release.
package struct SipHasher {
  private var v0: UInt64
  private var v1: UInt64
  private var v2: UInt64
  private var v3: UInt64
  /// Bytes not yet hashed: fewer than eight, least significant first.
  private var tail: UInt64 = 0
  private var tailCount = 0
  private var length = 0

  /// A hasher keyed with two 64-bit words; `wide` selects the 128-bit variant of the algorithm.
  package init(key0: UInt64, key1: UInt64, wide: Bool = true) {
    v0 = key0 ^ 0x736f_6d65_7073_6575
    v1 = key1 ^ 0x646f_7261_6e64_6f6d
    v2 = key0 ^ 0x6c79_6765_6e65_7261
    v3 = key1 ^ 0x7465_6462_7974_6573
    if wide { v1 ^= 0xee }
  }

  @inline(__always)
  private mutating func round() {
    v0 &+= v1
    v1 = v1.rotatedLeft(13) ^ v0
    v0 = v0.rotatedLeft(32)
    v2 &+= v3
    v3 = v3.rotatedLeft(16) ^ v2
    v0 &+= v3
    v3 = v3.rotatedLeft(21) ^ v0
    v2 &+= v1
    v1 = v1.rotatedLeft(17) ^ v2
    v2 = v2.rotatedLeft(32)
  }

  @inline(__always)
  private mutating func compress(_ word: UInt64) {
    v3 ^= word
    round()
    round()
    v0 ^= word
  }

  /// Adds one byte.
  @inline(__always)
  package mutating func combine(_ byte: UInt8) {
    tail |= UInt64(byte) << (UInt64(tailCount) * 8)
    tailCount += 1
    length += 1
    if tailCount == 8 {
      compress(tail)
      tail = 0
      tailCount = 0
    }
  }

  /// Adds eight bytes, least significant first. Bytes left over from an earlier call are
  /// completed from the word's low bytes, and its high bytes wait in their place, so the
  /// stream is hashed a word at a time wherever it stands.
  @inline(__always)
  package mutating func combine(_ word: UInt64) {
    length += 8
    if tailCount == 0 {
      compress(word)
    } else {
      let shift = UInt64(tailCount) * 8
      compress(tail | (word << shift))
      tail = word >> (64 - shift)
    }
  }

  /// Adds a run of bytes.
  package mutating func combine(bytes: UnsafeRawBufferPointer) {
    var index = 0
    while bytes.count - index >= 8 {
      combine(bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self).littleEndian)
      index += 8
    }
    while index < bytes.count {
      combine(bytes[index])
      index += 1
    }
  }

  /// The 64-bit hash of everything combined (for a hasher made with `wide: false`).
  package consuming func finalize64() -> UInt64 {
    compress(tail | (UInt64(truncatingIfNeeded: length) << 56))
    v2 ^= 0xff
    for _ in 0..<4 { round() }
    return v0 ^ v1 ^ v2 ^ v3
  }

  /// The 128-bit hash of everything combined (for a hasher made with `wide: true`).
  package consuming func finalize128() -> (UInt64, UInt64) {
    compress(tail | (UInt64(truncatingIfNeeded: length) << 56))
    v2 ^= 0xee
    for _ in 0..<4 { round() }
    let low = v0 ^ v1 ^ v2 ^ v3
    v1 ^= 0xdd
    for _ in 0..<4 { round() }
    return (low, v0 ^ v1 ^ v2 ^ v3)
  }
}

extension UInt64 {
  @inline(__always)
  fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { (self << count) | (self >> (64 - count)) }
}
