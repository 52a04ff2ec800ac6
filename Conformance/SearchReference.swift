import Foundation

/// The conformance suite's own full-text search, written apart from the core's and kept as
/// plain as possible: slow, but each rule of the Searching article is a few lines that say it.
/// The randomized check compares every backend with it.
enum SearchReference {
  // MARK: Words

  /// The words of a text: NFKD, marks (Mn, Me) dropped, lowercase mapping, then runs of
  /// letters, numbers and spacing marks, with each Han, Hiragana or Katakana letter a word alone.
  static func words(_ text: String) -> [String] {
    var folded: [Unicode.Scalar] = []
    for scalar in text.decomposedStringWithCompatibilityMapping.unicodeScalars where !isMark(scalar) {
      for lower in scalar.properties.lowercaseMapping.unicodeScalars where !isMark(lower) {
        folded.append(lower)
      }
    }
    var result: [String] = []
    var word = ""
    for scalar in folded {
      let category = scalar.properties.generalCategory
      let isWordPart = [
        .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber,
        .letterNumber, .otherNumber, .spacingMark,
      ].contains(category)
      let standsAlone =
        isWordPart
        && (scalar.properties.isIdeographic || (0x3040...0x30FF).contains(scalar.value)
          || (0x31F0...0x31FF).contains(scalar.value))
      if standsAlone {
        if !word.isEmpty { result.append(word) }
        word = ""
        result.append(String(scalar))
      } else if isWordPart {
        word.unicodeScalars.append(scalar)
      } else {
        if !word.isEmpty { result.append(word) }
        word = ""
      }
    }
    if !word.isEmpty { result.append(word) }
    return result
  }

  static func isMark(_ scalar: Unicode.Scalar) -> Bool {
    scalar.properties.generalCategory == .nonspacingMark
      || scalar.properties.generalCategory == .enclosingMark
  }

  /// Whether two words are the same scalars.
  static func same(_ a: String, _ b: String) -> Bool { Array(a.unicodeScalars) == Array(b.unicodeScalars) }

  // MARK: Queries

  /// A term: words in a row, the last perhaps a prefix.
  struct Term: Equatable {
    var words: [String]
    var prefix: Bool

    static func == (a: Term, b: Term) -> Bool {
      a.prefix == b.prefix && a.words.count == b.words.count
        && zip(a.words, b.words).allSatisfy { same($0, $1) }
    }

    /// Occurrences in a text's words.
    func count(in text: [String]) -> Int {
      var count = 0
      var start = 0
      while start + words.count <= text.count {
        var ok = true
        for (offset, word) in words.enumerated() {
          let candidate = text[start + offset]
          let isLast = offset == words.count - 1
          let hit =
            isLast && prefix
            ? Array(candidate.unicodeScalars).starts(with: Array(word.unicodeScalars)) : same(candidate, word)
          if !hit { ok = false }
        }
        if ok { count += 1 }
        start += 1
      }
      return count
    }
  }

  /// A query in reverse Polish notation over terms, built with a shunting yard.
  enum Step {
    case term(Term)
    case and, or, not
  }

  /// A parsed query, or `nil` when the core must refuse it.
  struct Parsed {
    var program: [Step]
    /// Terms in order of first appearance, each with whether it appears outside any NOT.
    var terms: [(term: Term, positive: Bool)]
  }

  static func parse(_ query: String) -> Parsed? {
    // Lexemes: "(", ")", "AND", "OR", "NOT", or a term.
    enum Lexeme {
      case open, close, and, or, not
      case term(Term)
    }
    var lexemes: [Lexeme] = []
    var chars = Array(query.unicodeScalars)
    chars.append(" ")
    var i = 0
    var pending = ""
    func flushWord() -> Bool {
      defer { pending = "" }
      if pending.isEmpty { return true }
      switch pending {
      case "AND": lexemes.append(.and)
      case "OR": lexemes.append(.or)
      case "NOT": lexemes.append(.not)
      default:
        let w = words(pending)
        let isPrefix = pending.hasSuffix("*")
        if w.isEmpty { return !isPrefix }
        lexemes.append(.term(Term(words: w, prefix: isPrefix)))
      }
      return true
    }
    while i < chars.count {
      let c = chars[i]
      if c.properties.isWhitespace || c == "\0" || c == "(" || c == ")" || c == "\"" {
        if !flushWord() { return nil }
        if c == "(" { lexemes.append(.open) }
        if c == ")" { lexemes.append(.close) }
        if c == "\"" {
          guard let end = chars[(i + 1)...].firstIndex(of: "\"") else { return nil }
          var inner = ""
          inner.unicodeScalars.append(contentsOf: chars[(i + 1)..<end])
          let w = words(inner)
          if !w.isEmpty { lexemes.append(.term(Term(words: w, prefix: false))) }
          i = end
        }
      } else {
        pending.unicodeScalars.append(c)
      }
      i += 1
    }
    guard !lexemes.isEmpty else { return nil }
    // Insert the implicit ANDs, and check that operands and operators alternate.
    var full: [Lexeme] = []
    var expectOperand = true
    var depth = 0
    var maxDepth = 0
    var notRun = 0
    for lexeme in lexemes {
      switch lexeme {
      case .term, .open, .not:
        if !expectOperand { full.append(.and) }
        full.append(lexeme)
        expectOperand = true
        if case .term = lexeme {
          expectOperand = false
          notRun = 0
        }
        if case .open = lexeme {
          depth += 1
          notRun = 0
        }
        if case .not = lexeme { notRun += 1 }
        maxDepth = max(maxDepth, depth + notRun)
      case .close:
        if expectOperand || depth == 0 { return nil }
        depth -= 1
        full.append(lexeme)
      case .and, .or:
        if expectOperand { return nil }
        full.append(lexeme)
        expectOperand = true
      }
    }
    if expectOperand || depth != 0 || maxDepth > 32 { return nil }
    // Shunting yard: NOT binds tightest, then AND, then OR.
    func precedence(_ step: Lexeme) -> Int {
      switch step {
      case .not: 3
      case .and: 2
      case .or: 1
      default: 0
      }
    }
    var output: [Step] = []
    var stack: [Lexeme] = []
    func pop(_ lexeme: Lexeme) {
      switch lexeme {
      case .and: output.append(.and)
      case .or: output.append(.or)
      case .not: output.append(.not)
      default: break
      }
    }
    for lexeme in full {
      switch lexeme {
      case .term(let term): output.append(.term(term))
      case .open: stack.append(lexeme)
      case .close:
        while let top = stack.last {
          stack.removeLast()
          if case .open = top { break }
          pop(top)
        }
      case .not: stack.append(lexeme)
      case .and, .or:
        while let top = stack.last, precedence(top) >= precedence(lexeme) {
          stack.removeLast()
          pop(top)
        }
        stack.append(lexeme)
      }
    }
    while let top = stack.popLast() { pop(top) }
    // Terms and their polarity: count the NOTs above each term by evaluating polarity symbolically.
    var terms: [(term: Term, positive: Bool)] = []
    var polarityStack: [[(Term, Bool)]] = []
    for step in output {
      switch step {
      case .term(let term): polarityStack.append([(term, true)])
      case .not:
        let top = polarityStack.removeLast()
        polarityStack.append(top.map { ($0.0, !$0.1) })
      case .and, .or:
        let right = polarityStack.removeLast()
        let left = polarityStack.removeLast()
        polarityStack.append(left + right)
      }
    }
    for (term, positive) in polarityStack.last ?? [] {
      if let index = terms.firstIndex(where: { $0.term == term }) {
        terms[index].positive = terms[index].positive || positive
      } else {
        terms.append((term, positive))
      }
    }
    return Parsed(program: output, terms: terms)
  }

  /// Whether a text (nil: null) matches.
  static func matches(_ parsed: Parsed, _ text: String?) -> Bool {
    guard let text else { return false }
    let w = words(text)
    var stack: [Bool] = []
    for step in parsed.program {
      switch step {
      case .term(let term): stack.append(term.count(in: w) > 0)
      case .not: stack.append(!stack.removeLast())
      case .and:
        let r = stack.removeLast()
        let l = stack.removeLast()
        stack.append(l && r)
      case .or:
        let r = stack.removeLast()
        let l = stack.removeLast()
        stack.append(l || r)
      }
    }
    return stack.last ?? false
  }

  /// BM25 scores (k1 1.2, b 0.75) of every row for one query on a field, by row number.
  static func scores(_ parsed: Parsed, _ texts: [String?]) -> [Double] {
    let documents = texts.map { $0.map(words) }
    let present = documents.compactMap { $0 }
    let n = Double(present.count)
    let average = present.isEmpty ? 0 : Double(present.map(\.count).reduce(0, +)) / n
    var scores = Array(repeating: 0.0, count: texts.count)
    for (term, positive) in parsed.terms where positive {
      let df = Double(present.filter { term.count(in: $0) > 0 }.count)
      let idf = log(1 + (n - df + 0.5) / (df + 0.5))
      for (row, document) in documents.enumerated() {
        guard let document else { continue }
        let tf = term.count(in: document)
        if tf == 0 { continue }
        let relative = average == 0 ? 1 : Double(document.count) / average
        scores[row] += idf * Double(tf) * (1.2 + 1) / (Double(tf) + 1.2 * (1 - 0.75 + 0.75 * relative))
      }
    }
    return scores
  }
}
