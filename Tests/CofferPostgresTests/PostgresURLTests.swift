@_spi(Backend) import Coffer
import CofferStores
import Foundation
import Testing

@_spi(Backend) @testable import CofferPostgres

/// What a `postgres://` URL says, and the `invalidURL` errors for what it must not say. No
/// server needed.
@Suite struct PostgresURLTests {
  typealias Configuration = PostgresBackend.Configuration

  func configuration(_ url: String, environment: [String: String] = [:]) throws -> Configuration {
    try Configuration(url: StoreURL(url), environment: environment)
  }

  @Test func aURLWithNoOptionsTakesTheDefaults() throws {
    let configuration = try configuration("postgres://app@db.internal/chat")
    #expect(configuration.host == "db.internal")
    #expect(configuration.port == 5432)
    #expect(configuration.user == "app")
    #expect(configuration.password == nil)
    #expect(configuration.database == "chat")
    #expect(configuration.schema == "public")
    #expect(configuration.poolSize == 8)
    #expect(configuration.tls == .prefer)
    #expect(configuration.connectTimeout == .seconds(10))
    #expect(configuration.statementTimeout == nil)
    #expect(configuration.storeName == "postgres://app@db.internal:5432/chat")
  }

  @Test func everyOptionIsRead() throws {
    let configuration = try configuration(
      "postgres://app@db.internal:6543/chat?schema=tenant_7&pool=3&tls=require&connectTimeout=2.5"
        + "&statementTimeout=0.05")
    #expect(configuration.port == 6543)
    #expect(configuration.schema == "tenant_7")
    #expect(configuration.poolSize == 3)
    #expect(configuration.tls == .require)
    #expect(configuration.connectTimeout == .milliseconds(2500))
    #expect(configuration.statementTimeout == .milliseconds(50))
    #expect(configuration.storeName == "postgres://app@db.internal:6543/chat?schema=tenant_7")
  }

  @Test func optionsTakeTheirLimitsAndSpellings() throws {
    #expect(try configuration("postgres://h/d?pool=1").poolSize == 1)
    #expect(try configuration("postgres://h/d?pool=256").poolSize == 256)
    #expect(try configuration("postgres://h/d?tls=Disable").tls == .disable)
    #expect(try configuration("postgres://h/d?tls=prefer").tls == .prefer)
    #expect(try configuration("postgres://h/d?connectTimeout=3600").connectTimeout == .seconds(3600))
    #expect(try configuration("postgres://h/d?connectTimeout=0.0001").connectTimeout == .milliseconds(1))
    #expect(try configuration("postgres://h/d?statementTimeout=0").statementTimeout == nil)
    #expect(try configuration("postgres://h/d?statementTimeout=86400").statementTimeout == .seconds(86400))
    let longest = String(repeating: "s", count: 63)
    #expect(try configuration("postgres://h/d?schema=\(longest)").schema == longest)
    #expect(try configuration("postgres://h/d?schema=%C3%A9t%C3%A9").schema == "été")
  }

  @Test func thePostgresqlSchemeIsTheSame() throws {
    let configuration = try configuration("postgresql://app@db.internal:6543/chat?pool=2")
    #expect(configuration.host == "db.internal")
    #expect(configuration.port == 6543)
    #expect(configuration.database == "chat")
    #expect(configuration.poolSize == 2)
    #expect(BackendRegistry.builtIn.entry(for: "postgresql") != nil)
  }

  @Test(arguments: [
    ("postgres://h/d?schema=", "schema must be"),
    ("postgres://h/d?schema=pg_temp", "schema must be"),
    ("postgres://h/d?schema=\(String(repeating: "s", count: 64))", "schema must be"),
    ("postgres://h/d?schema=%C3%A9\(String(repeating: "s", count: 62))", "schema must be"),
    ("postgres://h/d?pool=0", "pool must be"),
    ("postgres://h/d?pool=257", "pool must be"),
    ("postgres://h/d?pool=two", "pool must be"),
    ("postgres://h/d?pool=1.5", "pool must be"),
    ("postgres://h/d?pool=", "pool must be"),
    ("postgres://h/d?tls=maybe", "tls must be"),
    ("postgres://h/d?tls=", "tls must be"),
    ("postgres://h/d?connectTimeout=0", "connectTimeout must be"),
    ("postgres://h/d?connectTimeout=-1", "connectTimeout must be"),
    ("postgres://h/d?connectTimeout=3601", "connectTimeout must be"),
    ("postgres://h/d?connectTimeout=soon", "connectTimeout must be"),
    ("postgres://h/d?connectTimeout=nan", "connectTimeout must be"),
    ("postgres://h/d?connectTimeout=inf", "connectTimeout must be"),
    ("postgres://h/d?statementTimeout=-0.5", "statementTimeout must be"),
    ("postgres://h/d?statementTimeout=86401", "statementTimeout must be"),
    ("postgres://h/d?statementTimeout=nan", "statementTimeout must be"),
    ("postgres://h/d?statementTimeout=10s", "statementTimeout must be"),
    ("postgres://h/d?poolSize=4", "option 'poolSize'"),
    ("postgres://h/d?sslmode=require", "option 'sslmode'"),
    ("postgres://app@/d", "names no host"),
    ("postgres://app@h", "names no database"),
    ("postgres://app@h/", "names no database"),
    ("postgres://app@h/a/b", "names no database"),
  ])
  func badValuesAreInvalidURLsNamingTheOption(url: String, words: String) {
    #expect {
      _ = try configuration(url)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .invalidURL && error?.message.contains(words) == true
    }
  }

  @Test func anotherSchemeIsNotAPostgresURL() {
    #expect {
      _ = try configuration("mysql://h/d")
    } throws: { error in
      (error as? CofferError)?.code == .invalidURL
    }
  }

  @Test func thePasswordComesFromTheURLBeforePGPASSWORD() throws {
    let fromURL = try configuration(
      "postgres://app:url-s3cret@h/d", environment: ["PGPASSWORD": "env-s3cret", "PGUSER": "other"])
    #expect(fromURL.password == "url-s3cret")
    #expect(fromURL.user == "app")
    let fromEnvironment = try configuration("postgres://app@h/d", environment: ["PGPASSWORD": "env-s3cret"])
    #expect(fromEnvironment.password == "env-s3cret")
    let none = try configuration("postgres://app@h/d", environment: [:])
    #expect(none.password == nil)
  }

  @Test func aPercentEncodedPasswordIsDecoded() throws {
    let configuration = try configuration("postgres://app:p%40ss%3Aw%2Fd@h/d")
    #expect(configuration.password == "p@ss:w/d")
  }

  @Test func theUserComesFromPGUSERWhenTheURLHasNone() throws {
    #expect(try configuration("postgres://h/d", environment: ["PGUSER": "reporting"]).user == "reporting")
    #expect(try configuration("postgres://h/d").user == "postgres")
  }

  @Test func theStoreNameNeverHoldsThePassword() throws {
    let secret = "Sup3r-s3cret-\(UUID().uuidString)"
    for url in [
      "postgres://app:\(secret)@db.internal:5433/chat?schema=tenant_7",
      "postgresql://app:\(secret)@db.internal/chat",
    ] {
      let configuration = try configuration(url)
      #expect(configuration.password == secret)
      #expect(!configuration.storeName.contains(secret))
      #expect(configuration.storeName.hasPrefix("postgres://app@db.internal:"))
    }
    let fromEnvironment = try configuration("postgres://app@h/d", environment: ["PGPASSWORD": secret])
    #expect(!fromEnvironment.storeName.contains(secret))
  }

  @Test func aConfigurationPrintedOrDumpedNeverShowsThePassword() throws {
    let secret = "Sup3r-s3cret-\(UUID().uuidString)"
    let url = try StoreURL(
      "postgres://app:\(secret)@db1:5433,db2/chat?schema=tenant_7&pool=3&statementTimeout=2")
    let configuration = try Configuration(url: url, environment: [:])
    var dumped = ""
    dump(configuration, to: &dumped)
    var dumpedURL = ""
    dump(url, to: &dumpedURL)
    for (what, text) in [
      ("description", "\(configuration)"), ("debugDescription", String(reflecting: configuration)),
      ("dump", dumped), ("URL dump", dumpedURL), ("URL", "\(url)"),
    ] {
      #expect(
        !text.contains(secret),
        "\(what) shows the password: \(text.replacingOccurrences(of: secret, with: "…"))")
    }
    #expect("\(configuration)".hasPrefix("postgres://app@db1:5433,db2:5432/chat?schema=tenant_7 (pool 3"))
    #expect("\(configuration)".contains("a password (not shown)"))
    #expect(dumped.contains("tenant_7") && dumped.contains("(set, not shown)"))
    #expect(dumpedURL.contains("db2") && dumpedURL.contains("(set, not shown)"))
    let none = try Configuration(url: StoreURL("postgres://app@h/d"), environment: [:])
    #expect("\(none)".contains("no password"))
  }

  @Test func anInvalidURLErrorNeverHoldsThePassword() {
    let secret = "Sup3r-s3cret-\(UUID().uuidString)"
    for url in [
      "postgres://app:\(secret)@h/d?pool=0", "postgres://app:\(secret)@h/d?tls=maybe",
      "postgres://app:\(secret)@h?pool=2", "postgres://app:\(secret)@h/d?bogus=1",
    ] {
      #expect {
        _ = try configuration(url)
      } throws: { error in
        guard let error = error as? CofferError else { return false }
        return error.code == .invalidURL && !error.reveals(secret)
      }
    }
  }

  @Test func anIPv6HostIsKeptWithoutItsBrackets() throws {
    let configuration = try configuration("postgres://app@[::1]:5433/chat")
    #expect(configuration.host == "::1")
    #expect(configuration.address == "[::1]:5433")
    #expect(configuration.storeName == "postgres://app@[::1]:5433/chat")
  }
}
