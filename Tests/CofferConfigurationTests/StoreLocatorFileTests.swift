import Coffer
import CofferConfiguration
import Foundation
import Testing

@Suite("StoreLocator configuration files")
struct StoreLocatorFileTests {
  /// Resolves with only a configuration file, and a fallback that shows when the file is silent.
  func resolve(file: String) async throws -> (url: String, source: StoreURLSource) {
    try await StoreLocator(environment: [:], configFile: file).resolve(
      explicit: nil, fallback: "memory:fallback")
  }

  @Test("a JSON file's coffer.store is read")
  func json() async throws {
    try await withTemporaryDirectory { directory in
      let file = try directory.write(
        "app.json", #"{"coffer": {"store": "sqlite:///var/app/db.sqlite"}, "other": 1}"#)
      let chosen = try await resolve(file: file)
      #expect(chosen.url == "sqlite:///var/app/db.sqlite")
      #expect(chosen.source == .configFile(file))
    }
  }

  @Test("a YAML file's coffer.store is read, as .yaml and as .yml")
  func yaml() async throws {
    try await withTemporaryDirectory { directory in
      for name in ["app.yaml", "app.yml", "APP.YML"] {
        let file = try directory.write(
          name, "# settings\ncoffer:\n  store: lmdb:///var/app/env?mapSize=1GiB\n")
        let chosen = try await resolve(file: file)
        #expect(chosen.url == "lmdb:///var/app/env?mapSize=1GiB")
        #expect(chosen.source == .configFile(file))
      }
    }
  }

  @Test("in YAML, memory: must be quoted; quoted it is read")
  func yamlQuotedMemory() async throws {
    try await withTemporaryDirectory { directory in
      let quoted = try directory.write("quoted.yaml", "coffer:\n  store: \"memory:\"\n")
      #expect(try await resolve(file: quoted).url == "memory:")
      let bare = try directory.write("bare.yaml", "coffer:\n  store: memory:\n")
      let error = await #expect(throws: CofferError.self) { try await resolve(file: bare) }
      #expect(error?.code == .invalidConfiguration)
      #expect(error?.message.contains(#"Quote a URL that ends in ':', such as "memory:""#) == true)
    }
  }

  @Test("a file without coffer.store leaves the choice to the fallback")
  func fileWithoutKey() async throws {
    try await withTemporaryDirectory { directory in
      let json = try directory.write("a.json", #"{"coffer": {"other": "x"}, "server": {"port": 80}}"#)
      #expect(try await resolve(file: json).source == .fallback)
      let yaml = try directory.write("b.yaml", "server:\n  port: 80\n")
      #expect(try await resolve(file: yaml).source == .fallback)
    }
  }

  @Test("an empty coffer.store counts as unset")
  func emptyValue() async throws {
    try await withTemporaryDirectory { directory in
      let file = try directory.write("a.json", #"{"coffer": {"store": ""}}"#)
      #expect(try await resolve(file: file).source == .fallback)
    }
  }

  @Test("a missing file is an invalidConfiguration error naming the path and COFFER_CONFIG")
  func missingFile() async throws {
    try await withTemporaryDirectory { directory in
      let path = directory.missing("absent.json")
      let error = await #expect(throws: CofferError.self) {
        try await StoreLocator(environment: ["COFFER_CONFIG": path]).resolve(
          explicit: nil, fallback: "memory:")
      }
      #expect(error?.code == .invalidConfiguration)
      #expect(error?.path == path)
      #expect(error?.message.contains(path) == true)
      #expect(error?.message.contains("COFFER_CONFIG") == true)
      #expect(error?.message.contains("does not exist") == true)
    }
  }

  @Test("a directory is not a configuration file")
  func directoryAsFile() async throws {
    try await withTemporaryDirectory { directory in
      let sub = directory.path + "/settings.json"
      try FileManager.default.createDirectory(atPath: sub, withIntermediateDirectories: false)
      let directoryError = await #expect(throws: CofferError.self) { try await resolve(file: sub) }
      #expect(directoryError?.code == .invalidConfiguration)
      #expect(directoryError?.message.contains("is a directory") == true)
    }
  }

  @Test("malformed JSON is an invalidConfiguration error naming the file and showing the form")
  func malformedJSON() async throws {
    try await withTemporaryDirectory { directory in
      let file = try directory.write("app.json", #"{"coffer": {"store": "memory:",}"#)
      let error = await #expect(throws: CofferError.self) { try await resolve(file: file) }
      #expect(error?.code == .invalidConfiguration)
      #expect(error?.path == file)
      #expect(error?.message.contains(file) == true)
      #expect(error?.message.contains(#"{"coffer": {"store": "#) == true)
      #expect(error?.underlying != nil)
    }
  }

  @Test("JSON whose top level is not an object is malformed")
  func jsonTopLevelArray() async throws {
    try await withTemporaryDirectory { directory in
      let file = try directory.write("app.json", #"["memory:"]"#)
      let error = await #expect(throws: CofferError.self) { try await resolve(file: file) }
      #expect(error?.code == .invalidConfiguration)
    }
  }

  @Test("malformed and empty YAML are invalidConfiguration errors")
  func malformedYAML() async throws {
    try await withTemporaryDirectory { directory in
      for contents in ["coffer:\n  store: [unclosed\n", "", "- just\n- a list\n"] {
        let file = try directory.write("app.yaml", contents)
        let error = await #expect(throws: CofferError.self) { try await resolve(file: file) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains(file) == true)
      }
    }
  }

  @Test(
    "a coffer.store that is not a string is an invalidConfiguration error naming the key",
    arguments: [
      ("a.json", #"{"coffer": {"store": 42}}"#),
      ("b.json", #"{"coffer": {"store": true}}"#),
      ("c.json", #"{"coffer": {"store": ["memory:"]}}"#),
      ("d.yaml", "coffer:\n  store:\n    - memory:a\n"),
    ])
  func wrongType(name: String, contents: String) async throws {
    try await withTemporaryDirectory { directory in
      let file = try directory.write(name, contents)
      let error = await #expect(throws: CofferError.self) { try await resolve(file: file) }
      #expect(error?.code == .invalidConfiguration)
      #expect(error?.message.contains("coffer.store") == true)
      #expect(error?.message.contains(file) == true)
      #expect(error?.path == file)
    }
  }

  @Test("coffer written as a single value instead of a mapping is an error, not silence")
  func cofferNotAMapping() async throws {
    try await withTemporaryDirectory { directory in
      for (name, contents) in [("a.json", #"{"coffer": "memory:"}"#), ("b.yaml", "coffer: memory:a\n")] {
        let file = try directory.write(name, contents)
        let error = await #expect(throws: CofferError.self) { try await resolve(file: file) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("store") == true)
      }
    }
  }

  @Test("an unknown extension is an invalidConfiguration error listing the ones read")
  func unknownExtension() async throws {
    try await withTemporaryDirectory { directory in
      for name in ["app.toml", "app", "app.json.bak"] {
        let file = try directory.write(name, #"{"coffer": {"store": "memory:"}}"#)
        let error = await #expect(throws: CofferError.self) { try await resolve(file: file) }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains(".json, .yaml or .yml") == true)
        #expect(error?.path == file)
      }
    }
  }
}
