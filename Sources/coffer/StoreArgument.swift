import ArgumentParser
@_spi(Backend) import Coffer
import CofferStores
import Foundation
import Logging

/// Opening the stores the data tools name on their command lines.
enum StoreArgument {
  /// Opens a store that must already exist: a file or folder URL whose path holds nothing is
  /// refused before any backend could create a new store there.
  static func openExisting(_ url: String, role: String, logger: Logger? = nil) async throws -> Store {
    do {
      let parsed = try StoreURL(url)
      if ["sqlite", "lmdb", "plist"].contains(parsed.scheme), parsed.host == nil, !parsed.path.isEmpty,
        !FileManager.default.fileExists(atPath: parsed.path)
      {
        throw CofferError(
          .notFound,
          "There is no store at this path, so the \(role) cannot be read. Check the URL (an absolute path takes three "
            + "slashes: sqlite:///var/app/db.sqlite).", store: parsed.description, path: parsed.path)
      }
      return try await Store.open(url: url, registry: .builtIn, logger: logger)
    } catch {
      throw Terminal.failure(error, while: "opening the \(role) '\(redacted(url))'")
    }
  }

  /// Opens a store, creating it when it does not exist.
  static func open(_ url: String, role: String, logger: Logger? = nil) async throws -> Store {
    do {
      return try await Store.open(url: url, registry: .builtIn, logger: logger)
    } catch {
      throw Terminal.failure(error, while: "opening the \(role) '\(redacted(url))'")
    }
  }

  /// The URL as messages show it: without a password.
  static func redacted(_ url: String) -> String { (try? StoreURL(url))?.description ?? "(a malformed URL)" }
}
