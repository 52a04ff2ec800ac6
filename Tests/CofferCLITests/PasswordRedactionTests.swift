import Foundation
import Testing

/// No command prints the password of a store URL, on any path that fails to open the store.
@Suite struct PasswordRedactionTests {
  /// A URL whose server refuses connections at once (nothing listens on port 1), with a
  /// password that must never appear in what a command prints.
  static let password = "Sentinel-Pw-7f3a"
  static let url = "postgres://user:\(password)@127.0.0.1:1/db"

  @Test(arguments: [
    ["demo", "--store", url],
    ["inspect", url],
    ["copy", url, "memory:"],
    ["copy", "memory:", url],
    ["export", url],
    ["import", url],
    ["verify", url],
    ["migrate", url],
    ["conformance", url],
  ])
  func aFailedOpenNeverPrintsThePassword(arguments: [String]) async throws {
    let run = try await CommandRun.coffer(arguments, input: [])
    #expect(run.status != 0, "opening a store nothing serves fails")
    #expect(!run.errorOutput.isEmpty, "the failure is reported")
    #expect(!run.output.contains(Self.password), "standard output: \(run.output)")
    #expect(!run.errorOutput.contains(Self.password), "standard error: \(run.errorOutput)")
  }

  @Test func aMalformedURLWithAPasswordIsRedactedToo() async throws {
    let run = try await CommandRun.coffer([
      "demo", "--store", "postgres://user:\(Self.password)@host:port/db",
    ])
    #expect(run.status != 0)
    #expect(!run.errorOutput.contains(Self.password), "standard error: \(run.errorOutput)")
  }
}
