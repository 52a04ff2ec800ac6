import Coffer
import CofferConfiguration
import Testing

/// Which of the three configured places name a store in one precedence case.
struct PrecedenceCase: Sendable, CustomTestStringConvertible {
  var explicit: Bool
  var environment: Bool
  var file: Bool

  static let all: [PrecedenceCase] = [false, true].flatMap { explicit in
    [false, true].flatMap { environment in
      [false, true].map { file in PrecedenceCase(explicit: explicit, environment: environment, file: file) }
    }
  }

  var testDescription: String { "explicit: \(explicit), environment: \(environment), file: \(file)" }
}

@Suite("StoreLocator precedence")
struct StoreLocatorPrecedenceTests {
  @Test("explicit beats COFFER_STORE beats the config file beats the fallback", arguments: PrecedenceCase.all)
  func precedence(_ setup: PrecedenceCase) async throws {
    try await withTemporaryDirectory { directory in
      let file = try directory.write("app.json", #"{"coffer": {"store": "memory:file"}}"#)
      let environment = setup.environment ? ["COFFER_STORE": "memory:env"] : [:]
      let locator = StoreLocator(environment: environment, configFile: setup.file ? file : nil)
      let chosen = try await locator.resolve(
        explicit: setup.explicit ? "memory:explicit" : nil, fallback: "memory:fallback")
      switch (setup.explicit, setup.environment, setup.file) {
      case (true, _, _):
        #expect(chosen.url == "memory:explicit")
        #expect(chosen.source == .explicit)
      case (false, true, _):
        #expect(chosen.url == "memory:env")
        #expect(chosen.source == .environment)
      case (false, false, true):
        #expect(chosen.url == "memory:file")
        #expect(chosen.source == .configFile(file))
      case (false, false, false):
        #expect(chosen.url == "memory:fallback")
        #expect(chosen.source == .fallback)
      }
    }
  }

  @Test("the same precedence holds when COFFER_CONFIG names the file", arguments: PrecedenceCase.all)
  func precedenceThroughCofferConfig(_ setup: PrecedenceCase) async throws {
    try await withTemporaryDirectory { directory in
      let file = try directory.write("app.yaml", "coffer:\n  store: memory:file\n")
      var environment: [String: String] = [:]
      if setup.environment { environment["COFFER_STORE"] = "memory:env" }
      if setup.file { environment["COFFER_CONFIG"] = file }
      let chosen = try await StoreLocator(environment: environment).resolve(
        explicit: setup.explicit ? "memory:explicit" : nil, fallback: "memory:fallback")
      let expected: (String, StoreURLSource) =
        setup.explicit
        ? ("memory:explicit", .explicit)
        : setup.environment
          ? ("memory:env", .environment)
          : setup.file ? ("memory:file", .configFile(file)) : ("memory:fallback", .fallback)
      #expect(chosen.url == expected.0)
      #expect(chosen.source == expected.1)
    }
  }

  @Test("the configFile argument beats the file COFFER_CONFIG names")
  func argumentBeatsCofferConfig() async throws {
    try await withTemporaryDirectory { directory in
      let named = try directory.write("named.json", #"{"coffer": {"store": "memory:named"}}"#)
      let given = try directory.write("given.json", #"{"coffer": {"store": "memory:given"}}"#)
      let locator = StoreLocator(environment: ["COFFER_CONFIG": named], configFile: given)
      let chosen = try await locator.resolve(explicit: nil, fallback: "memory:")
      #expect(chosen.url == "memory:given")
      #expect(chosen.source == .configFile(given))
    }
  }

  @Test("a file is not read while an earlier place names a store, so a broken one does not matter")
  func laterPlacesAreNotRead() async throws {
    try await withTemporaryDirectory { directory in
      let broken = try directory.write("broken.json", "{ not json")
      let explicit = try await StoreLocator(environment: [:], configFile: broken)
        .resolve(explicit: "memory:a", fallback: "memory:")
      #expect(explicit.source == .explicit)
      let environment = try await StoreLocator(
        environment: ["COFFER_STORE": "memory:b", "COFFER_CONFIG": directory.missing("gone.json")]
      ).resolve(explicit: nil, fallback: "memory:")
      #expect(environment.source == .environment)
    }
  }

  @Test("an empty COFFER_STORE counts as unset")
  func emptyEnvironmentVariableIsUnset() async throws {
    let chosen = try await StoreLocator(environment: ["COFFER_STORE": ""])
      .resolve(explicit: nil, fallback: "memory:fallback")
    #expect(chosen.url == "memory:fallback")
    #expect(chosen.source == .fallback)
  }

  @Test("a blank COFFER_STORE counts as unset and the config file is used")
  func blankEnvironmentVariableFallsThroughToFile() async throws {
    try await withTemporaryDirectory { directory in
      let file = try directory.write("app.json", #"{"coffer": {"store": "memory:file"}}"#)
      let chosen = try await StoreLocator(environment: ["COFFER_STORE": "  ", "COFFER_CONFIG": file])
        .resolve(explicit: nil, fallback: "memory:")
      #expect(chosen.url == "memory:file")
    }
  }

  @Test("an empty COFFER_CONFIG counts as unset")
  func emptyCofferConfigIsUnset() async throws {
    let chosen = try await StoreLocator(environment: ["COFFER_CONFIG": ""])
      .resolve(explicit: nil, fallback: "memory:")
    #expect(chosen.source == .fallback)
  }

  @Test("the chosen URL is returned trimmed of white space")
  func urlIsTrimmed() async throws {
    let chosen = try await StoreLocator(environment: ["COFFER_STORE": "  sqlite:///tmp/a.sqlite\n"])
      .resolve(explicit: nil, fallback: "memory:")
    #expect(chosen.url == "sqlite:///tmp/a.sqlite")
  }

  @Test("sources describe themselves for messages")
  func sourceDescriptions() {
    #expect(StoreURLSource.explicit.description == "given explicitly")
    #expect(StoreURLSource.environment.description == "from COFFER_STORE")
    #expect(StoreURLSource.configFile("/etc/app.yaml").description == "from coffer.store in /etc/app.yaml")
    #expect(StoreURLSource.fallback.description == "the default")
  }
}
