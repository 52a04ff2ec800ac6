import CSQLite
@_spi(Backend) import Coffer

extension SQLiteConnection {
  /// The name of the SQL function that evaluates a full-text match, which every connection
  /// registers.
  static let textMatchFunction = "coffer_text_matches"

  /// Registers ``textMatchFunction``: `coffer_text_matches(text, query)` is 1 when the text
  /// (as a blob of UTF-8) has the words the query asks for, by Coffer's own tokenizer and query
  /// rules (`TextQuery`), 0 when not, and 0 for a NULL text: the match of a field without a text
  /// index, or of a query FTS5 cannot say (see ``SQLiteTextQuery``), computed in the row's
  /// scan. The parsed
  /// query is kept with the statement (`sqlite3_set_auxdata`) and parsed once per statement run.
  static func registerTextMatchFunction(on handle: OpaquePointer) -> Int32 {
    sqlite3_create_function_v2(
      handle, textMatchFunction, 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, textMatches, nil, nil, nil)
  }
}

/// A parsed query kept as a statement's auxiliary data.
private final class ParsedTextQuery {
  let query: TextQuery
  init(_ query: TextQuery) { self.query = query }
}

/// The body of `coffer_text_matches`.
private func textMatches(
  _ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?
) {
  guard count == 2, let text = arguments?[0], let queryArgument = arguments?[1] else {
    sqlite3_result_null(context)
    return
  }
  let query: TextQuery
  if let cached = sqlite3_get_auxdata(context, 1) {
    query = Unmanaged<ParsedTextQuery>.fromOpaque(cached).takeUnretainedValue().query
  } else {
    let length = Int(sqlite3_value_bytes(queryArgument))
    let source = sqlite3_value_blob(queryArgument)
    let queryText =
      source.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
    guard let parsed = try? TextQuery(parsing: queryText) else {
      sqlite3_result_error(context, "The search query cannot be parsed.", -1)
      return
    }
    query = parsed
    let box = Unmanaged.passRetained(ParsedTextQuery(parsed)).toOpaque()
    sqlite3_set_auxdata(context, 1, box) { pointer in
      if let pointer { Unmanaged<ParsedTextQuery>.fromOpaque(pointer).release() }
    }
  }
  guard sqlite3_value_type(text) != SQLITE_NULL else {
    sqlite3_result_int(context, 0)
    return
  }
  let length = Int(sqlite3_value_bytes(text))
  let source = sqlite3_value_blob(text)
  let value =
    source.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
  sqlite3_result_int(context, query.matches(value) ? 1 : 0)
}
