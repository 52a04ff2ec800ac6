@_spi(Backend) import Coffer

/// A broken rule: what was expected and what came back.
struct CheckFailure: Error, CustomStringConvertible {
  let description: String
  init(_ message: String) { self.description = message }
}

/// Fails the check unless the condition holds.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
  if !condition { throw CheckFailure(message()) }
}

/// Fails the check unless `actual` equals `expected`.
func expectEqual<T: Equatable>(_ actual: T, _ expected: T, _ what: String) throws {
  if actual != expected {
    throw CheckFailure("\(what): expected \(show(expected)), got \(show(actual)).")
  }
}

/// Fails the check unless `body` throws a ``CofferError`` with `code`; returns that error.
@discardableResult
func expectThrows<R>(
  _ code: CofferError.Code, _ what: String, _ body: () async throws -> R
) async throws -> CofferError {
  let result: R
  do {
    result = try await body()
  } catch let error as CofferError {
    if error.code == code { return error }
    throw CheckFailure("\(what): expected a \(code) error, got \(error.code): \(error)")
  } catch {
    throw CheckFailure("\(what): expected a \(code) error, got a non-Coffer error: \(error)")
  }
  throw CheckFailure("\(what): expected a \(code) error, but it succeeded and returned \(show(result)).")
}

/// Fails the check unless the error's message or context mentions each of `parts`.
func expectMentions(_ error: CofferError, _ parts: [String], _ what: String) throws {
  let text = error.description
  for part in parts where !text.contains(part) {
    throw CheckFailure("\(what): expected the error to mention '\(part)', got: \(text)")
  }
}

/// A value rendered for a failure message; long texts are cut.
func show<T>(_ value: T) -> String {
  let text = String(describing: value)
  return text.count > 400 ? String(text.prefix(400)) + "… (\(text.count) characters)" : text
}

/// The ids a typed query returns, in order.
func ids<T: Storable>(_ query: StoreQuery<T>) async throws -> [T.ID] {
  try await query.fetch().map(\.id)
}

/// Fails the check unless the query returns exactly these ids in this order.
func expectIDs<T: Storable>(_ query: StoreQuery<T>, _ expected: [T.ID], _ what: String) async throws {
  try expectEqual(try await ids(query), expected, what)
}
