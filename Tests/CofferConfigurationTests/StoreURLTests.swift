@_spi(Backend) import Coffer
import CofferStores
import Testing

/// A URL form and the parts it must parse into.
struct ParsedForm: Sendable, CustomTestStringConvertible {
  var text: String
  var scheme: String
  var path: String
  var host: String? = nil
  var port: Int? = nil
  var user: String? = nil
  var options: [String: String] = [:]

  var testDescription: String { text }
}

@Suite("StoreURL parsing")
struct StoreURLTests {
  static let forms: [ParsedForm] = [
    ParsedForm(text: "memory:", scheme: "memory", path: ""),
    ParsedForm(text: "memory:cache", scheme: "memory", path: "cache"),
    ParsedForm(
      text: "plist:///var/app/store.plist?format=xml", scheme: "plist", path: "/var/app/store.plist",
      options: ["format": "xml"]),
    ParsedForm(
      text: "plist:///var/app/store.plist?format=binary", scheme: "plist", path: "/var/app/store.plist",
      options: ["format": "binary"]),
    ParsedForm(text: "sqlite:///var/app/db.sqlite", scheme: "sqlite", path: "/var/app/db.sqlite"),
    ParsedForm(
      text: "lmdb:///var/app/env?mapSize=1GiB", scheme: "lmdb", path: "/var/app/env",
      options: ["mapSize": "1GiB"]),
    ParsedForm(
      text: "postgres://ann@db.example.com:5432/app", scheme: "postgres", path: "/app",
      host: "db.example.com",
      port: 5432, user: "ann"),
    ParsedForm(text: "postgres://localhost/app", scheme: "postgres", path: "/app", host: "localhost"),
    ParsedForm(text: "sqlite:app.sqlite", scheme: "sqlite", path: "app.sqlite"),
    ParsedForm(text: "sqlite:data/app.sqlite", scheme: "sqlite", path: "data/app.sqlite"),
    ParsedForm(
      text: "plist:store.plist?format=xml", scheme: "plist", path: "store.plist", options: ["format": "xml"]),
    ParsedForm(text: "sqlite:///tmp/my%20db.sqlite", scheme: "sqlite", path: "/tmp/my db.sqlite"),
    ParsedForm(text: "sqlite:///tmp/caf%C3%A9.sqlite", scheme: "sqlite", path: "/tmp/café.sqlite"),
    ParsedForm(text: "SQLite:///tmp/a.sqlite", scheme: "sqlite", path: "/tmp/a.sqlite"),
    ParsedForm(text: "  memory:padded \n", scheme: "memory", path: "padded"),
    ParsedForm(text: "sqlite:///tmp/100%25.sqlite", scheme: "sqlite", path: "/tmp/100%.sqlite"),
    ParsedForm(text: "sqlite:///tmp/a%3Fb%23c.sqlite", scheme: "sqlite", path: "/tmp/a?b#c.sqlite"),
    ParsedForm(
      text: "plist:///s.plist?note=a%26b%3Dc", scheme: "plist", path: "/s.plist", options: ["note": "a&b=c"]),
    ParsedForm(
      text: "postgres://ann@[::1]:5432/app", scheme: "postgres", path: "/app", host: "[::1]", port: 5432,
      user: "ann"),
    ParsedForm(
      text: "lmdb:///d?mapSize=1GiB&maxReaders=8", scheme: "lmdb", path: "/d",
      options: ["mapSize": "1GiB", "maxReaders": "8"]),
  ]

  @Test("every documented form parses into its parts", arguments: forms)
  func parses(_ form: ParsedForm) throws {
    let url = try StoreURL(form.text)
    #expect(url.scheme == form.scheme)
    #expect(url.path == form.path)
    #expect(url.host == form.host)
    #expect(url.port == form.port)
    #expect(url.user == form.user)
    #expect(url.password == nil)
    #expect(url.options == form.options)
  }

  @Test("description parses back to the same URL", arguments: forms)
  func descriptionRoundTrips(_ form: ParsedForm) throws {
    let url = try StoreURL(form.text)
    #expect(try StoreURL(url.description) == url)
  }

  /// Found by `fuzz-store-url` (`S://h-A%0A`, `S://h,A%3A`): a host or user holding a percent-encoded
  /// character a URL cannot hold as it is was printed decoded, so the description did not parse
  /// back to the same URL.
  @Test(
    "a host or user with an encoded character prints encoded and parses back",
    arguments: ["S://h-A%0A", "S://h,A%3A", "postgres://a%0Ab@h%2Cx:5432/db", "postgres://u%20v@h/db"])
  func encodedHostAndUserRoundTrip(_ text: String) throws {
    let url = try StoreURL(text)
    let again = try StoreURL(url.description)
    #expect(again == url, "\(url.description)")
    #expect(again.description == url.description)
  }

  @Test("the plain forms print as written")
  func descriptionOfPlainForms() throws {
    for text in [
      "memory:", "memory:cache", "plist:///var/app/store.plist?format=xml", "sqlite:///var/app/db.sqlite",
      "lmdb:///var/app/env?mapSize=1GiB", "postgres://ann@db.example.com:5432/app", "sqlite:app.sqlite",
    ] {
      #expect(try StoreURL(text).description == text)
    }
  }

  @Test("a password is parsed but never printed")
  func passwordIsKeptOutOfDescription() throws {
    let url = try StoreURL("postgres://ann:hunter2@db:5432/app")
    #expect(url.password == "hunter2")
    #expect(url.user == "ann")
    #expect(url.description == "postgres://ann@db:5432/app")
    #expect(!String(describing: url).contains("hunter2"))
    #expect(!url.with(path: "/other").description.contains("hunter2"))
  }

  @Test(
    "a password never appears in an error message",
    arguments: [
      "postgres://ann:hunter2@db:5432/app?x=1&x=2",
      "postgres://ann:hunter2@db:99999/app",
      "postgres://ann:hunter2@db:port/app",
      "postgres://ann:hunter2@my db/app",
      "postgres://ann:hunter2@db/app?=1",
    ])
  func passwordIsKeptOutOfErrors(_ text: String) throws {
    let error = #expect(throws: CofferError.self) { try StoreURL(text) }
    #expect(error?.code == .invalidURL)
    #expect(error?.description.contains("hunter2") == false)
  }

  @Test("a password never appears in an option error")
  func passwordIsKeptOutOfOptionErrors() throws {
    let url = try StoreURL("postgres://ann:hunter2@db/app?cache=1")
    let error = #expect(throws: CofferError.self) { try url.checkOptions(allowed: ["sslmode"]) }
    #expect(error?.code == .invalidURL)
    #expect(error?.description.contains("hunter2") == false)
    #expect(error?.message.contains("sslmode") == true)
  }

  @Test(
    "malformed text is invalidURL",
    arguments: [
      "", "   ", "memory", "no scheme here", "://x", ":memory", "1sqlite:///x", "sq lite:///x",
      "postgres://db:99999/app", "postgres://db:0/app", "postgres://db:port/app",
      "lmdb:///d?mapSize=1GiB&mapSize=2GiB", "sqlite:///my db.sqlite", "sqlite:///tmp/a b?x=1",
      "sqlite:///x?=1",
    ])
  func malformed(_ text: String) throws {
    let error = #expect(throws: CofferError.self) { try StoreURL(text) }
    #expect(error?.code == .invalidURL)
    #expect(error?.message.contains("SCHEME:LOCATION") == true)
  }

  @Test("the message says why: empty, no scheme, duplicate option, port range")
  func malformedReasons() throws {
    func message(_ text: String) -> String {
      (#expect(throws: CofferError.self) { try StoreURL(text) })?.message ?? ""
    }
    #expect(message("").contains("empty"))
    #expect(message("memory").contains("no scheme"))
    #expect(message("lmdb:///d?mapSize=1&mapSize=2").contains("'mapSize' is given twice"))
    #expect(message("postgres://db:70000/app").contains("out of range"))
  }

  @Test("options are read by name, and checkOptions accepts the allowed ones")
  func options() throws {
    let url = try StoreURL("plist:///s.plist?format=xml")
    #expect(url.option("format") == "xml")
    #expect(url.option("missing") == nil)
    try url.checkOptions(allowed: ["format"])
  }

  @Test("an option without a value reads as empty")
  func optionWithoutValue() throws {
    #expect(try StoreURL("lmdb:///d?readOnly").option("readOnly") == "")
  }

  @Test("with(path:) keeps everything but the path")
  func withPath() throws {
    let url = try StoreURL("postgres://ann@db:5432/app?sslmode=require")
    let moved = url.with(path: "/other")
    #expect(moved.path == "/other")
    #expect(moved.host == "db")
    #expect(moved.port == 5432)
    #expect(moved.user == "ann")
    #expect(moved.options == ["sslmode": "require"])
  }

  @Test("a URL built from parts lowercases its scheme and prints like a parsed one")
  func memberwise() throws {
    let url = StoreURL(scheme: "SQLite", path: "/tmp/a.sqlite")
    #expect(url.scheme == "sqlite")
    #expect(url.description == "sqlite:///tmp/a.sqlite")
    #expect(try StoreURL("sqlite:///tmp/a.sqlite") == url)
  }
}
