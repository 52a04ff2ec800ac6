import Foundation

/// One word of full-text search: the UTF-8 bytes of a folded token. Tokens compare byte by
/// byte (by Unicode scalar), never by canonical equivalence, so every backend that stores them
/// agrees on which are equal.
package struct TextToken: Hashable, Sendable, Comparable {
  /// The folded token's UTF-8 bytes.
  package var utf8: [UInt8]

  /// A token from its bytes.
  package init(_ utf8: [UInt8]) { self.utf8 = utf8 }

  /// The token as text.
  package var text: String { String(decoding: utf8, as: UTF8.self) }

  /// Whether the token starts with `prefix`'s bytes (a whole number of scalars, since both are
  /// valid UTF-8).
  package func hasPrefix(_ prefix: TextToken) -> Bool {
    utf8.count >= prefix.utf8.count && utf8.starts(with: prefix.utf8)
  }

  package static func < (lhs: TextToken, rhs: TextToken) -> Bool {
    lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
  }
}

/// Coffer's one definition of the words of a text, used by every backend (see the Searching
/// article).
///
/// 1. The text is put in Unicode compatibility decomposition (NFKD), so `ﬁ` becomes `fi`,
///    `①` becomes `1`, a full-width `Ａ` becomes `A`, and `é` becomes `e` and a combining acute.
/// 2. Every nonspacing or enclosing mark (general category Mn or Me) is dropped: the diacritic
///    folding (`é` → `e`, `ñ` → `n`, Hebrew and Arabic vowel points too).
/// 3. Every remaining scalar is replaced by its Unicode lowercase mapping (marks that mapping
///    brings, such as the dot of `İ`, are dropped too). There is no further case folding:
///    `ß` stays `ß` and does not equal `ss`.
/// 4. Words are runs of letters (L*), numbers (N*) and spacing marks (Mc). Every other scalar —
///    spaces, punctuation, symbols, emoji, controls, NUL — ends a word and is not part of any.
///    So `don't` is `don` and `t`, and `e-mail` is `e` and `mail`.
/// 5. Han ideographs, Hiragana and Katakana are one word per character (unigrams), since those
///    scripts put no spaces between words: `東京タワー` is five words. A query word of several
///    such characters is searched as a phrase, so `東京` finds the text in which `東` comes
///    right before `京`. Other scripts without spaces (Thai, Lao, Khmer) are not segmented: a
///    run of their letters is one word.
///
/// This is Coffer's own scan over Unicode scalar properties, not Foundation's or ICU's word
/// boundaries (whose rules change with locale and library version). Its results depend only on
/// the Unicode tables of the Swift runtime the store runs in.
package enum TextTokenizer {
  /// The words of `text`, in order.
  package static func tokens(_ text: String) -> [TextToken] {
    var tokens: [TextToken] = []
    scan(text) { tokens.append($0) }
    return tokens
  }

  /// Hands each word of `text` to `body`, in order.
  package static func scan(_ text: String, _ body: (TextToken) -> Void) {
    var current: [UInt8] = []
    func finish() {
      if !current.isEmpty {
        body(TextToken(current))
        current.removeAll(keepingCapacity: true)
      }
    }
    func emit(_ scalar: Unicode.Scalar) {
      switch kind(of: scalar) {
      case .word: appendUTF8(scalar, to: &current)
      case .single:
        finish()
        var single: [UInt8] = []
        appendUTF8(scalar, to: &single)
        body(TextToken(single))
      case .separator: finish()
      }
    }
    for scalar in decomposed(text).unicodeScalars {
      if scalar.value < 0x80 {
        // ASCII: no marks, no decomposition, lowercase by arithmetic.
        let value = scalar.value
        if value >= 0x41 && value <= 0x5A {
          current.append(UInt8(value + 0x20))
        } else if (value >= 0x61 && value <= 0x7A) || (value >= 0x30 && value <= 0x39) {
          current.append(UInt8(value))
        } else {
          finish()
        }
        continue
      }
      if isMark(scalar) { continue }
      if scalar.properties.changesWhenLowercased {
        for lower in scalar.properties.lowercaseMapping.unicodeScalars where !isMark(lower) { emit(lower) }
      } else {
        emit(scalar)
      }
    }
    finish()
  }

  /// The text in NFKD, or the text itself when it is ASCII (which NFKD leaves alone).
  static func decomposed(_ text: String) -> String {
    if text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
    return text.decomposedStringWithCompatibilityMapping
  }

  enum ScalarKind { case word, single, separator }

  /// What a folded scalar is to the tokenizer.
  static func kind(of scalar: Unicode.Scalar) -> ScalarKind {
    switch scalar.properties.generalCategory {
    case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
      .decimalNumber, .letterNumber, .otherNumber, .spacingMark:
      return isUnigram(scalar) ? .single : .word
    default:
      return .separator
    }
  }

  /// Whether a letter is a word of its own: a Han ideograph, Hiragana or Katakana.
  static func isUnigram(_ scalar: Unicode.Scalar) -> Bool {
    let value = scalar.value
    if value >= 0x3040 && value <= 0x30FF { return true }  // Hiragana, Katakana
    if value >= 0x31F0 && value <= 0x31FF { return true }  // Katakana phonetic extensions
    return scalar.properties.isIdeographic
  }

  /// Whether a scalar is a nonspacing or enclosing mark, which folding drops.
  static func isMark(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .enclosingMark: true
    default: false
    }
  }

  static func appendUTF8(_ scalar: Unicode.Scalar, to bytes: inout [UInt8]) {
    UTF8.encode(scalar) { bytes.append($0) }
  }
}
