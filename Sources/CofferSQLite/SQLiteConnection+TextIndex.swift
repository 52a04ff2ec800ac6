import CSQLite
@_spi(Backend) import Coffer

extension SQLiteConnection {
  /// Registers the functions a text index uses (see ``SQLiteTextIndex``): the scalar
  /// `coffer_text_words(text)`, a text's words (as a blob of UTF-8) joined by single spaces,
  /// NULL for NULL; and FTS5's auxiliary function `coffer_text_collect(table, collector)`. A
  /// SQLite built without FTS5 gets only the first; creating a text index then fails.
  static func registerTextIndexFunctions(on handle: OpaquePointer) -> Int32 {
    let code = sqlite3_create_function_v2(
      handle, SQLiteTextIndex.wordsFunction, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, textWords, nil, nil,
      nil)
    guard code == SQLITE_OK else { return code }
    guard let api = fts5API(handle), let create = api.pointee.xCreateFunction else { return SQLITE_OK }
    return create(api, SQLiteTextIndex.collectFunction, nil, collectText, nil)
  }

  /// FTS5's registration interface, which `SELECT fts5(?1)` hands over through a pointer
  /// binding; `nil` when SQLite has no FTS5.
  private static func fts5API(_ handle: OpaquePointer) -> UnsafeMutablePointer<fts5_api>? {
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(handle, "SELECT fts5(?1)", -1, &statement, nil) == SQLITE_OK, let statement
    else {
      return nil
    }
    defer { sqlite3_finalize(statement) }
    var api: UnsafeMutablePointer<fts5_api>?
    withUnsafeMutablePointer(to: &api) { pointer in
      if sqlite3_bind_pointer(statement, 1, pointer, cString(fts5PointerType), nil) == SQLITE_OK {
        _ = sqlite3_step(statement)
      }
    }
    return api
  }
}

/// The pointer type FTS5 hands its interface over as.
private let fts5PointerType: StaticString = "fts5_api_ptr"
/// The pointer type a ``SQLiteTextCollector`` is bound as.
let textCollectorPointerType: StaticString = "coffer_text_collector"

/// A static string's bytes as the C string SQLite keeps a pointer to (a literal, so it lives as
/// long as the program and ends with NUL).
func cString(_ string: StaticString) -> UnsafePointer<CChar> {
  UnsafeRawPointer(string.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// The body of `coffer_text_words`.
private func textWords(
  _ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?
) {
  guard count == 1, let text = arguments?[0], sqlite3_value_type(text) != SQLITE_NULL else {
    sqlite3_result_null(context)
    return
  }
  let length = Int(sqlite3_value_bytes(text))
  let source = sqlite3_value_blob(text)
  let value =
    source.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
  var joined: [UInt8] = []
  joined.reserveCapacity(length + 1)
  TextTokenizer.scan(value) { word in
    if !joined.isEmpty { joined.append(0x20) }
    joined.append(contentsOf: word.utf8)
  }
  // A text without words is an empty text (a row of no words), never NULL.
  joined.append(0)
  joined.withUnsafeBytes { buffer in
    sqlite3_result_text64(
      context, buffer.baseAddress?.assumingMemoryBound(to: CChar.self), sqlite3_uint64(buffer.count - 1),
      unsafeBitCast(-1, to: sqlite3_destructor_type.self), UInt8(SQLITE_UTF8))
  }
}

/// The body of `coffer_text_collect`: hands the current row to the collector bound as its
/// argument.
private func collectText(
  _ api: UnsafePointer<Fts5ExtensionApi>?, _ fts: OpaquePointer?, _ context: OpaquePointer?, _ count: Int32,
  _ arguments: UnsafeMutablePointer<OpaquePointer?>?
) {
  guard let api, let fts, count == 1, let argument = arguments?[0],
    let collector = sqlite3_value_pointer(argument, cString(textCollectorPointerType))
  else {
    sqlite3_result_error(context, "coffer_text_collect needs the collector Coffer binds.", -1)
    return
  }
  let code = Unmanaged<SQLiteTextCollector>.fromOpaque(collector).takeUnretainedValue().collect(api, fts)
  if code == SQLITE_OK {
    sqlite3_result_null(context)
  } else {
    sqlite3_result_error_code(context, code)
  }
}
