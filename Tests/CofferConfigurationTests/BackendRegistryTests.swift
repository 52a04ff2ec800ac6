@_spi(Backend) import Coffer
import CofferStores
import Testing

@Suite("BackendRegistry")
struct BackendRegistryTests {
  @Test("the built-in registry has memory")
  func builtInSchemes() {
    #expect(BackendRegistry.makeBuiltIn().schemes.contains("memory"))
    #expect(BackendRegistry.builtIn.schemes.contains("memory"))
    #expect(BackendRegistry.makeBuiltIn().forms.contains("memory:NAME"))
  }

  @Test("an unknown scheme is unknownScheme, listing the supported schemes and forms")
  func unknownScheme() async throws {
    let error = await #expect(throws: CofferError.self) {
      try await BackendRegistry.makeBuiltIn().open("nosuch:///x")
    }
    #expect(error?.code == .unknownScheme)
    #expect(error?.message.contains("'nosuch:'") == true)
    #expect(error?.message.contains("Supported schemes: ") == true)
    #expect(error?.message.contains("memory:") == true)
    #expect(error?.message.contains("memory:NAME") == true)
    #expect(error?.store == "nosuch:///x")
  }

  @Test("an empty registry says to register a backend")
  func emptyRegistry() async throws {
    let error = await #expect(throws: CofferError.self) { try await BackendRegistry().open("memory:") }
    #expect(error?.code == .unknownScheme)
    #expect(error?.message.contains("register a backend") == true)
  }

  @Test("a malformed URL is invalidURL and lists the supported schemes")
  func malformedListsSchemes() async throws {
    let error = await #expect(throws: CofferError.self) {
      try await BackendRegistry.makeBuiltIn().open("nocolon")
    }
    #expect(error?.code == .invalidURL)
    #expect(error?.message.contains("lmdb:, memory:") == true)
  }

  @Test("an unknown scheme's error does not show a password")
  func unknownSchemeRedactsPassword() async throws {
    let error = await #expect(throws: CofferError.self) {
      try await BackendRegistry.makeBuiltIn().open("mysql://ann:hunter2@db/app")
    }
    #expect(error?.code == .unknownScheme)
    #expect(error?.description.contains("hunter2") == false)
  }

  @Test("scheme lookup ignores case")
  func caseInsensitiveLookup() throws {
    let registry = BackendRegistry.makeBuiltIn()
    #expect(registry.entry(for: "MEMORY") != nil)
    #expect(try registry.entry(for: StoreURL("Memory:x")).scheme == "memory")
  }

  @Test("memory: takes no options", arguments: ["memory:?cache=1", "memory:name?format=xml"])
  func memoryRejectsOptions(_ text: String) async throws {
    let error = await #expect(throws: CofferError.self) { try await BackendRegistry.makeBuiltIn().open(text) }
    #expect(error?.code == .invalidURL)
    #expect(error?.message.contains("none") == true)
  }

  @Test("memory: takes no host")
  func memoryRejectsHost() async throws {
    let error = await #expect(throws: CofferError.self) {
      try await BackendRegistry.makeBuiltIn().open("memory://host/name")
    }
    #expect(error?.code == .invalidURL)
  }

  @Test("a registered scheme opens through the registry")
  func registerScheme() async throws {
    let builtIn = BackendRegistry.makeBuiltIn()
    var registry = BackendRegistry()
    registry.register(
      BackendRegistry.Entry(
        scheme: "Test", forms: ["test:"],
        open: { _ in try await builtIn.open(StoreURL(scheme: "memory")) },
        scratchURL: { _, _, name in StoreURL(scheme: "test", path: name) }))
    #expect(registry.schemes == ["test"])
    let store = try await Store.open(url: "test:", registry: registry)
    #expect(store.backend.name == "memory:")
  }
}
