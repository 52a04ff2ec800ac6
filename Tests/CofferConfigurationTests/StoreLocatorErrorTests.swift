import Coffer
import CofferConfiguration
import Testing

@Suite("StoreLocator URL errors")
struct StoreLocatorErrorTests {
  @Test("a bad URL in COFFER_STORE is invalidURL and says it came from COFFER_STORE")
  func badEnvironmentURL() async throws {
    let error = await #expect(throws: CofferError.self) {
      try await StoreLocator(environment: ["COFFER_STORE": "not a url"]).resolve(
        explicit: nil, fallback: "memory:")
    }
    #expect(error?.code == .invalidURL)
    #expect(error?.message.contains("from COFFER_STORE") == true)
  }

  @Test("a bad explicit URL says it was given explicitly")
  func badExplicitURL() async throws {
    let error = await #expect(throws: CofferError.self) {
      try await StoreLocator(environment: [:]).resolve(explicit: "://x", fallback: "memory:")
    }
    #expect(error?.code == .invalidURL)
    #expect(error?.message.contains("given explicitly") == true)
  }

  @Test("an empty explicit URL is an error, not unset")
  func emptyExplicitURL() async throws {
    let error = await #expect(throws: CofferError.self) {
      try await StoreLocator(environment: ["COFFER_STORE": "memory:"]).resolve(
        explicit: "", fallback: "memory:")
    }
    #expect(error?.code == .invalidURL)
    #expect(error?.message.contains("empty") == true)
  }

  @Test("a bad URL in the config file names the key and the file")
  func badFileURL() async throws {
    try await withTemporaryDirectory { directory in
      let file = try directory.write("app.json", #"{"coffer": {"store": "sqlite"}}"#)
      let error = await #expect(throws: CofferError.self) {
        try await StoreLocator(environment: [:], configFile: file).resolve(explicit: nil, fallback: "memory:")
      }
      #expect(error?.code == .invalidURL)
      #expect(error?.message.contains("from coffer.store in \(file)") == true)
    }
  }

  @Test("a bad fallback says it is the fallback")
  func badFallback() async throws {
    let error = await #expect(throws: CofferError.self) {
      try await StoreLocator(environment: [:]).resolve(explicit: nil, fallback: "")
    }
    #expect(error?.code == .invalidURL)
    #expect(error?.message.contains("fallback") == true)
  }

  @Test("a password in a bad URL from the environment is not repeated")
  func passwordRedacted() async throws {
    let error = await #expect(throws: CofferError.self) {
      try await StoreLocator(environment: ["COFFER_STORE": "postgres://ann:hunter2@db:5432/app?x=1&x=2"])
        .resolve(explicit: nil, fallback: "memory:")
    }
    #expect(error?.code == .invalidURL)
    #expect(error?.description.contains("hunter2") == false)
  }

  @Test("the locator checks the form of the URL only; the scheme is checked at open")
  func unknownSchemeResolves() async throws {
    let chosen = try await StoreLocator(environment: ["COFFER_STORE": "nosuch:///x"])
      .resolve(explicit: nil, fallback: "memory:")
    #expect(chosen.url == "nosuch:///x")
  }
}
