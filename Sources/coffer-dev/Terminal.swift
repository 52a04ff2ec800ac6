import ArgumentParser
@_spi(Backend) import Coffer
import CofferStores
import Foundation

/// Output, failures and store URLs as the harness commands show them: results on standard
/// output, problems on standard error, URLs never with a password.
enum Terminal {
  /// Writes a line to standard output.
  static func say(_ line: String = "") { print(line) }

  /// Writes a line to standard error.
  static func complain(_ line: String) { FileHandle.standardError.write(Data((line + "\n").utf8)) }

  /// Reports what failed, without a stack trace, and returns the exit code to throw.
  static func failure(_ error: any Error, while doing: String) -> ExitCode {
    complain("coffer-dev: \(doing) failed: \((error as? CofferError)?.description ?? "\(error)")")
    return .failure
  }

  /// Opens the store at `url`, creating it when it does not exist.
  static func open(_ url: String, role: String) async throws -> Store {
    do {
      return try await Store.open(url: url)
    } catch {
      throw failure(error, while: "opening the \(role) '\(redacted(url))'")
    }
  }

  /// The URL as messages show it: without a password.
  static func redacted(_ url: String) -> String { (try? StoreURL(url))?.description ?? "(a malformed URL)" }
}
