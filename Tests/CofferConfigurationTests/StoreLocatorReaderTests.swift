import Coffer
import CofferConfiguration
import Configuration
import Testing

@Suite("StoreLocator over a ConfigReader")
struct StoreLocatorReaderTests {
  @Test("coffer.store from the reader is used, named by the given name")
  func readerValue() async throws {
    let reader = ConfigReader(provider: InMemoryProvider(values: ["coffer.store": "memory:reader"]))
    let chosen = try await StoreLocator(reader: reader, name: "app settings")
      .resolve(explicit: nil, fallback: "memory:")
    #expect(chosen.url == "memory:reader")
    #expect(chosen.source == .configFile("app settings"))
  }

  @Test("an explicit URL beats the reader, and the fallback is used when it is silent")
  func readerPrecedence() async throws {
    let full = StoreLocator(
      reader: ConfigReader(provider: InMemoryProvider(values: ["coffer.store": "memory:r"])))
    #expect(try await full.resolve(explicit: "memory:e", fallback: "memory:f").source == .explicit)
    let empty = StoreLocator(reader: ConfigReader(provider: InMemoryProvider(values: ["coffer.store": ""])))
    #expect(try await empty.resolve(explicit: nil, fallback: "memory:f").source == .fallback)
    let silent = StoreLocator(reader: ConfigReader(provider: InMemoryProvider(values: [:])))
    #expect(try await silent.resolve(explicit: nil, fallback: "memory:f").url == "memory:f")
  }

  @Test("an environment provider in the reader spells the key COFFER_STORE")
  func readerEnvironmentMapping() async throws {
    let reader = ConfigReader(
      providers: [
        EnvironmentVariablesProvider(environmentVariables: ["COFFER_STORE": "memory:env"]),
        InMemoryProvider(values: ["coffer.store": "memory:defaults"]),
      ])
    let locator = StoreLocator(reader: reader)
    let chosen = try await locator.resolve(explicit: nil, fallback: "memory:")
    #expect(chosen.url == "memory:env")
    #expect(chosen.source == .configFile(reader.description))
  }

  @Test("a value of the wrong type in the reader is invalidConfiguration")
  func readerWrongType() async throws {
    let reader = ConfigReader(provider: InMemoryProvider(values: ["coffer.store": 42]))
    let error = await #expect(throws: CofferError.self) {
      try await StoreLocator(reader: reader, name: "settings").resolve(explicit: nil, fallback: "memory:")
    }
    #expect(error?.code == .invalidConfiguration)
    #expect(error?.message.contains("coffer.store") == true)
    #expect(error?.message.contains("settings") == true)
  }

  @Test("a bad URL from the reader names where it came from")
  func readerBadURL() async throws {
    let reader = ConfigReader(provider: InMemoryProvider(values: ["coffer.store": "nocolon"]))
    let error = await #expect(throws: CofferError.self) {
      try await StoreLocator(reader: reader, name: "settings").resolve(explicit: nil, fallback: "memory:")
    }
    #expect(error?.code == .invalidURL)
    #expect(error?.message.contains("coffer.store in settings") == true)
  }
}
