@_spi(Backend) import Coffer
@_spi(Backend) import CofferPostgres
import Foundation
import Testing

/// What `reads=` and `maxStandbyLag=` say in a `postgres://` URL, and the errors for what they
/// must not say. No server needed.
@Suite struct PostgresReadPlacementURLTests {
  private func configuration(_ text: String) throws -> PostgresBackend.Configuration {
    try PostgresBackend.Configuration(url: StoreURL(text), environment: [:])
  }

  @Test("reads go to the primary, with a 5 s lag bound, unless the URL says otherwise")
  func defaults() throws {
    let configuration = try configuration("postgres://app@db1,db2/chat")
    #expect(configuration.reads == .primary)
    #expect(configuration.maxStandbyLag == .seconds(5))
    #expect(!configuration.description.contains("reads"))
  }

  @Test("reads= takes primary, standby or any, in any case; maxStandbyLag= takes seconds")
  func values() throws {
    #expect(try configuration("postgres://app@db1,db2/chat?reads=standby").reads == .standby)
    #expect(try configuration("postgres://app@db1,db2/chat?reads=ANY").reads == .any)
    #expect(try configuration("postgres://app@db1,db2/chat?reads=primary").reads == .primary)
    let lagging = try configuration("postgres://app@db1,db2/chat?reads=any&maxStandbyLag=0.25")
    #expect(lagging.maxStandbyLag == .milliseconds(250))
    #expect(lagging.description.contains("reads any, maxStandbyLag 0.25 seconds"), "\(lagging)")
  }

  @Test(arguments: [
    ("postgres://h1,h2/d?reads=standbys", "reads must be primary, standby or any"),
    ("postgres://h1,h2/d?reads=", "reads must be primary, standby or any"),
    ("postgres://h1,h2/d?maxStandbyLag=0", "maxStandbyLag must be"),
    ("postgres://h1,h2/d?maxStandbyLag=-1", "maxStandbyLag must be"),
    ("postgres://h1,h2/d?maxStandbyLag=3601", "maxStandbyLag must be"),
    ("postgres://h1,h2/d?maxStandbyLag=soon", "maxStandbyLag must be"),
  ])
  func badValuesAreInvalidURLsNamingTheOption(url: String, words: String) {
    #expect {
      _ = try configuration(url)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .invalidURL && error?.message.contains(words) == true
    }
  }

  @Test("a bad reads= never shows the password")
  func badValueHidesThePassword() {
    let secret = "Sup3r-s3cret-\(UUID().uuidString)"
    #expect {
      _ = try configuration("postgres://app:\(secret)@h1,h2/d?reads=all")
    } throws: { error in
      guard let error = error as? CofferError else { return false }
      return error.code == .invalidURL && !error.reveals(secret) && error.message.contains("reads")
    }
  }
}
