extension TextQuery {
  /// The most levels of parentheses and `NOT`s a query may nest.
  package static var maximumDepth: Int { 32 }

  /// Why a query cannot be parsed, in words that name no part of it (a query is a value).
  package struct SyntaxError: Error, Hashable, Sendable {
    /// What is wrong and what to do.
    package var reason: String
  }

  /// Parses a query.
  ///
  /// - Throws: ``SyntaxError`` for a query with no word to search for, an unclosed quote or
  ///   parenthesis, an operator with nothing on one side, or nesting deeper than
  ///   ``maximumDepth``.
  package init(parsing text: String) throws(SyntaxError) {
    var parser = Parser(lexemes: try Self.lex(text))
    guard !parser.lexemes.isEmpty else {
      throw SyntaxError(reason: "has no word to search for; give at least one word, prefix* or \"phrase\"")
    }
    let root = try parser.parseOr(depth: 0)
    if parser.index < parser.lexemes.count {
      throw SyntaxError(reason: "has a closing parenthesis with no opening one; remove it or add a '('")
    }
    self.init(terms: parser.terms, root: root)
  }

  enum Lexeme: Equatable {
    case term(Term)
    case and, or, not, open, close
  }

  /// Splits a query into words, phrases, operators and parentheses; folds the words.
  static func lex(_ text: String) throws(SyntaxError) -> [Lexeme] {
    var lexemes: [Lexeme] = []
    var scalars = text.unicodeScalars[...]
    func isSpace(_ scalar: Unicode.Scalar) -> Bool { scalar.properties.isWhitespace || scalar == "\0" }
    while let first = scalars.first {
      if isSpace(first) {
        scalars = scalars.dropFirst()
      } else if first == "(" {
        lexemes.append(.open)
        scalars = scalars.dropFirst()
      } else if first == ")" {
        lexemes.append(.close)
        scalars = scalars.dropFirst()
      } else if first == "\"" {
        let rest = scalars.dropFirst()
        guard let end = rest.firstIndex(of: "\"") else {
          throw SyntaxError(reason: "has an opening quote with no closing quote; close the phrase with '\"'")
        }
        let tokens = TextTokenizer.tokens(String(String.UnicodeScalarView(rest[..<end])))
        if !tokens.isEmpty { lexemes.append(.term(Term(tokens: tokens, prefix: false))) }
        scalars = rest[rest.index(after: end)...]
      } else {
        let end =
          scalars.firstIndex { isSpace($0) || $0 == "(" || $0 == ")" || $0 == "\"" } ?? scalars.endIndex
        let word = String(String.UnicodeScalarView(scalars[..<end]))
        scalars = scalars[end...]
        switch word {
        case "AND": lexemes.append(.and)
        case "OR": lexemes.append(.or)
        case "NOT": lexemes.append(.not)
        default:
          let prefix = word.hasSuffix("*")
          let tokens = TextTokenizer.tokens(word)
          if !tokens.isEmpty {
            lexemes.append(.term(Term(tokens: tokens, prefix: prefix)))
          } else if prefix {
            throw SyntaxError(reason: "has a '*' with no letters before it; write a prefix such as swif*")
          }
        }
      }
    }
    return lexemes
  }

  struct Parser {
    let lexemes: [Lexeme]
    var index = 0
    var terms: [Term] = []

    init(lexemes: [Lexeme]) { self.lexemes = lexemes }

    var next: Lexeme? { index < lexemes.count ? lexemes[index] : nil }

    mutating func parseOr(depth: Int) throws(SyntaxError) -> Node {
      var parts = [try parseAnd(depth: depth, after: nil)]
      while next == .or {
        index += 1
        parts.append(try parseAnd(depth: depth, after: "OR"))
      }
      return parts.count == 1 ? parts[0] : .or(parts)
    }

    mutating func parseAnd(depth: Int, after operator: String?) throws(SyntaxError) -> Node {
      var parts = [try parseUnary(depth: depth, after: `operator`)]
      while let lexeme = next {
        switch lexeme {
        case .and:
          index += 1
          parts.append(try parseUnary(depth: depth, after: "AND"))
        case .term, .not, .open:
          parts.append(try parseUnary(depth: depth, after: nil))
        case .or, .close:
          return parts.count == 1 ? parts[0] : .and(parts)
        }
      }
      return parts.count == 1 ? parts[0] : .and(parts)
    }

    mutating func parseUnary(depth: Int, after operator: String?) throws(SyntaxError) -> Node {
      guard depth < TextQuery.maximumDepth else {
        throw SyntaxError(
          reason:
            "nests parentheses and NOT more than \(TextQuery.maximumDepth) levels deep; write it flatter")
      }
      guard let lexeme = next else {
        throw SyntaxError(
          reason: "ends with \(`operator` ?? "an operator"); put a word after it or remove it")
      }
      switch lexeme {
      case .term(let term):
        index += 1
        if let existing = terms.firstIndex(of: term) { return .term(existing) }
        terms.append(term)
        return .term(terms.count - 1)
      case .not:
        index += 1
        return .not(try parseUnary(depth: depth + 1, after: "NOT"))
      case .open:
        index += 1
        let inner = try parseOr(depth: depth + 1)
        guard next == .close else {
          throw SyntaxError(reason: "has an opening parenthesis with no closing one; add a ')'")
        }
        index += 1
        return inner
      case .and, .or, .close:
        let what =
          switch lexeme {
          case .and: "AND"
          case .or: "OR"
          default: "')'"
          }
        if let `operator` {
          throw SyntaxError(reason: "has \(what) right after \(`operator`); put a word between them")
        }
        throw SyntaxError(
          reason: what == "')'"
            ? "has empty parentheses; put a word inside them or remove them"
            : "starts a part with \(what); put a word before it")
      }
    }
  }
}
