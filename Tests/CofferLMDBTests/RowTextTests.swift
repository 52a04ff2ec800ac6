import Testing

@testable import CofferLMDB

/// The row decoder's strings: exactly the standard library's validating decoder's.
@Suite struct RowTextTests {
  private func text(_ bytes: [UInt8]) -> String? { bytes.withUnsafeBytes { RowCodec.text($0) } }

  private func agrees(_ bytes: [UInt8]) -> Bool { text(bytes) == String(validating: bytes, as: UTF8.self) }

  @Test func acceptsWellFormedText() {
    for text in [
      "", "a", "plain ASCII longer than eight bytes", "é", "€uro", "𝄞 clef", "mixé ascii 日本語 text 🙂",
    ] {
      #expect(self.text(Array(text.utf8)) == text, "\(text)")
    }
  }

  @Test(
    arguments: [
      [0x80], [0xC0, 0x80], [0xC1, 0xBF], [0xC2], [0xE0, 0x80, 0x80], [0xE0, 0xA0], [0xED, 0xA0, 0x80],
      [0xF0, 0x80, 0x80, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xFF],
      [0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0xE2, 0x82], [0xF1, 0x80, 0x80, 0x41],
      [0xEF, 0xBF, 0xBD, 0xFF],
    ] as [[UInt8]])
  func rejectsMalformedSequences(_ bytes: [UInt8]) {
    #expect(text(bytes) == nil)
  }

  @Test func agreesWithTheStandardLibraryOnRandomBytes() {
    var generator = SystemRandomNumberGenerator()
    let alphabet: [UInt8] = [
      0x41, 0x7F, 0x80, 0xBF, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xA0, 0x90,
    ]
    for _ in 0..<20_000 {
      let length = Int.random(in: 0...12, using: &generator)
      let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator) ?? 0 }
      #expect(agrees(bytes), "\(bytes)")
    }
  }
}
