@_spi(Backend) import Coffer
import CofferConfiguration
import CofferStores
import Testing

@Suite("Store.open(locator:)")
struct StoreOpenLocatorTests {
  @Test("opens the store the locator chooses")
  func opensChosenStore() async throws {
    let registry = BackendRegistry.makeBuiltIn()
    let locator = StoreLocator(environment: ["COFFER_STORE": "memory:shared"])
    let store = try await Store.open(locator: locator, fallback: "memory:", registry: registry)
    #expect(store.backend.name == "memory:shared")
    try await store.close()
  }

  @Test("an explicit URL wins here too")
  func explicitWins() async throws {
    let locator = StoreLocator(environment: ["COFFER_STORE": "memory:env"])
    let store = try await Store.open(
      locator: locator, explicit: "memory:flag", fallback: "memory:", registry: .makeBuiltIn())
    #expect(store.backend.name == "memory:flag")
  }

  @Test("an unknown scheme lists the supported ones and says where the URL came from")
  func unknownScheme() async throws {
    let locator = StoreLocator(environment: ["COFFER_STORE": "nosuch:///x"])
    let error = await #expect(throws: CofferError.self) {
      try await Store.open(locator: locator, fallback: "memory:", registry: .makeBuiltIn())
    }
    #expect(error?.code == .unknownScheme)
    #expect(error?.message.contains("memory:") == true)
    #expect(error?.message.contains("from COFFER_STORE") == true)
  }

  @Test("options a backend refuses are invalidURL, naming the source")
  func refusedOptions() async throws {
    let error = await #expect(throws: CofferError.self) {
      try await Store.open(
        locator: StoreLocator(environment: [:]), fallback: "memory:?cache=1", registry: .makeBuiltIn())
    }
    #expect(error?.code == .invalidURL)
    #expect(error?.message.contains("fallback") == true)
  }
}
