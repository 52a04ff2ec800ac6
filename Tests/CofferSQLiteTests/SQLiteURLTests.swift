@_spi(Backend) import Coffer
import CofferSQLite
import CofferTestSupport
import Foundation
import Testing

/// `sqlite:` URLs and their options.
@Suite struct SQLiteURLTests {
  @Test(arguments: [
    ("sqlite:///tmp/x.sqlite?busyTimeout=soon", "busyTimeout"),
    ("sqlite:///tmp/x.sqlite?busyTimeout=-1", "busyTimeout"),
    ("sqlite:///tmp/x.sqlite?synchronous=sometimes", "synchronous"),
    ("sqlite:///tmp/x.sqlite?readers=0", "readers"),
    ("sqlite:///tmp/x.sqlite?journal=delete", "journal"),
    ("sqlite://host/x.sqlite", "host"),
    ("sqlite:", "names no file"),
    ("sqlite:///tmp/", "names no file"),
  ])
  func badURLsAreInvalidURLErrorsNamingTheProblem(url: String, mention: String) async throws {
    await #expect {
      _ = try await sqliteRegistry().open(url)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .invalidURL && error?.message.contains(mention) == true
    }
  }

  @Test func optionsSetTheConfiguration() async throws {
    let folder = try TemporaryFolder()
    let backend = try await sqliteRegistry().open(
      "sqlite://\(folder.file("o.sqlite"))?busyTimeout=250&synchronous=NORMAL&readers=2")
    let sqlite = try #require(backend as? SQLiteBackend)
    #expect(
      sqlite.configuration == SQLiteBackend.Configuration(busyTimeout: 250, synchronous: .normal, readers: 2))
    #expect(sqlite.capabilities.contains([.durable, .multiProcess, .reopenable, .schemaEvolution]))
    try await backend.close()
  }

  @Test func aRelativeURLIsAPathFromTheCurrentDirectory() async throws {
    let folder = try TemporaryFolder()
    let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
    let relative = String(repeating: "../", count: depth) + String(folder.file("relative.sqlite").dropFirst())
    let backend = try await sqliteRegistry().open("sqlite:\(relative)")
    #expect(backend.name == "sqlite:\(relative)")
    try await backend.close()
    #expect(FileManager.default.fileExists(atPath: folder.file("relative.sqlite")))
  }
}
