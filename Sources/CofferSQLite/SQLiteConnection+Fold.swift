import CSQLite

extension SQLiteConnection {
  /// The name of the SQL function that folds ASCII case, which every connection registers.
  static let foldFunction = "coffer_fold_ascii"

  /// Registers ``foldFunction`` on a connection: `coffer_fold_ascii(x)` is the blob of `x`'s
  /// bytes with `A`–`Z` turned into `a`–`z`, or NULL for NULL. It is Coffer's own rather than
  /// SQLite's `lower()`, whose meaning an ICU build of SQLite changes to locale-aware Unicode
  /// folding; this one folds exactly as ``StringMatch/foldingASCIICase(_:)`` does.
  static func registerFoldFunction(on handle: OpaquePointer) -> Int32 {
    sqlite3_create_function_v2(
      handle, foldFunction, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, foldASCII, nil, nil, nil)
  }
}

/// The body of `coffer_fold_ascii`.
private func foldASCII(
  _ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?
) {
  guard count == 1, let argument = arguments?[0], sqlite3_value_type(argument) != SQLITE_NULL else {
    sqlite3_result_null(context)
    return
  }
  // The blob first, then its length: the order SQLite asks for.
  let source = sqlite3_value_blob(argument)
  let length = Int(sqlite3_value_bytes(argument))
  guard let source, length > 0 else {
    sqlite3_result_zeroblob(context, 0)
    return
  }
  let bytes = UnsafeRawBufferPointer(start: source, count: length)
  let folded = [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
    for (index, byte) in bytes.enumerated() {
      buffer[index] = byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }
    initialized = length
  }
  folded.withUnsafeBytes { buffer in
    // SQLITE_TRANSIENT: SQLite copies the bytes before this buffer goes away.
    sqlite3_result_blob64(
      context, buffer.baseAddress, sqlite3_uint64(length), unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    )
  }
}
