@_spi(Backend) import Coffer
import CofferStores
import Testing

@Suite("StoreURL with several hosts")
struct StoreURLHostsTests {
  @Test("several hosts parse in order, each with its port when it has one")
  func severalHosts() throws {
    let url = try StoreURL("postgres://ann@db1:5432,db2:5433,db3/app?schema=chat")
    #expect(
      url.hosts == [
        StoreURL.Host("db1", port: 5432), StoreURL.Host("db2", port: 5433), StoreURL.Host("db3"),
      ])
    #expect(url.host == "db1")
    #expect(url.port == 5432)
    #expect(url.user == "ann")
    #expect(url.path == "/app")
    #expect(url.options == ["schema": "chat"])
  }

  @Test("a URL with one host lists it; a URL without a host lists none")
  func oneHostOrNone() throws {
    #expect(try StoreURL("postgres://ann@db:5432/app").hosts == [StoreURL.Host("db", port: 5432)])
    #expect(try StoreURL("postgres://db/app").hosts == [StoreURL.Host("db")])
    #expect(try StoreURL("postgres://[::1]:5432/app").hosts == [StoreURL.Host("[::1]", port: 5432)])
    #expect(try StoreURL("memory:").hosts.isEmpty)
    #expect(try StoreURL("sqlite:///var/app/db.sqlite").hosts.isEmpty)
  }

  @Test(
    "several hosts print as written and parse back to the same URL",
    arguments: [
      "postgres://ann@db1:5432,db2:5433/app", "postgres://db1,db2/app?pool=2",
      "postgresql://ann@[::1]:5432,[::2]:5433,db/app", "postgres://ann@db1,db2:6432/app?schema=s&tls=require",
    ])
  func roundTrips(_ text: String) throws {
    let url = try StoreURL(text)
    #expect(url.description == text)
    #expect(try StoreURL(url.description) == url)
  }

  @Test("a password is kept out of a several-host URL's description")
  func password() throws {
    let url = try StoreURL("postgres://ann:hunter2@db1:5432,db2:5433/app")
    #expect(url.password == "hunter2")
    #expect(url.description == "postgres://ann@db1:5432,db2:5433/app")
    #expect(!url.with(path: "/other").description.contains("hunter2"))
  }

  @Test(
    "a bad host list is invalidURL, without the password",
    arguments: [
      "postgres://ann:hunter2@db1,/app", "postgres://ann:hunter2@,db2/app",
      "postgres://ann:hunter2@db1,,db2/app",
      "postgres://ann:hunter2@db1,db2:0/app", "postgres://ann:hunter2@db1,db2:70000/app",
      "postgres://ann:hunter2@db1,db2:port/app", "postgres://ann:hunter2@db1,[::1/app",
      "postgres://ann:hunter2@db1:99999,db2/app",
    ])
  func badHostList(_ text: String) throws {
    let error = #expect(throws: CofferError.self) { try StoreURL(text) }
    #expect(error?.code == .invalidURL)
    #expect(error?.message.contains("SCHEME:LOCATION") == true)
    #expect(error?.description.contains("hunter2") == false)
  }

  @Test("the message says which host of the list is wrong")
  func badHostNamed() throws {
    func message(_ text: String) -> String {
      (#expect(throws: CofferError.self) { try StoreURL(text) })?.message ?? ""
    }
    #expect(message("postgres://db1,,db3/app").contains("host 2 of its host list is empty"))
    #expect(message("postgres://db1,db2:70000/app").contains("port 70000 of host 2 is out of range"))
    #expect(message("postgres://db1,db2,db3:x/app").contains("host 3 of its host list, 'db3:x'"))
  }

  @Test("a comma in a password, a path or an option is not a host list")
  func commasElsewhere() throws {
    let withPassword = try StoreURL("postgres://ann:a,b@db/app")
    #expect(withPassword.password == "a,b")
    #expect(withPassword.hosts == [StoreURL.Host("db")])
    #expect(try StoreURL("sqlite:///tmp/a,b.sqlite").path == "/tmp/a,b.sqlite")
    #expect(try StoreURL("sqlite:a,b.sqlite").path == "a,b.sqlite")
    #expect(try StoreURL("lmdb:///d?note=a,b").option("note") == "a,b")
  }

  @Test("with(path:) and the parts initializer keep every host")
  func builtFromParts() throws {
    let hosts = [StoreURL.Host("db1", port: 5432), StoreURL.Host("db2")]
    let url = StoreURL(scheme: "postgres", path: "/app", hosts: hosts, user: "ann", options: ["pool": "2"])
    #expect(url.host == "db1")
    #expect(url.port == 5432)
    #expect(url.description == "postgres://ann@db1:5432,db2/app?pool=2")
    #expect(try StoreURL(url.description) == url)
    #expect(url.with(path: "/other").hosts == hosts)
    #expect(try StoreURL("postgres://ann@db1:5432,db2/x?pool=2").with(path: "/app") == url)
  }
}
