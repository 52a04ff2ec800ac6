@_spi(Backend) import Coffer
import CofferChildProcess
@_spi(Backend) import CofferPostgres
import CofferTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A primary and its streaming standbys on loopback, each a throwaway cluster made by
/// `scripts/test-postgres` and `scripts/test-postgres-standby` in a folder of the test's.
final class StandbyClusters {
  /// How a standby of the set streams.
  struct Standby {
    /// Whether the primary waits for it (a synchronous standby) or not.
    var synchronous = false
    /// How long after the primary it replays each commit (`recovery_min_apply_delay`).
    var applyDelayMilliseconds: Int?
  }

  let folder: TemporaryFolder
  let primaryPort: Int
  let standbyPorts: [Int]
  let password: String

  private init(folder: TemporaryFolder, primaryPort: Int, standbyPorts: [Int], password: String) {
    self.folder = folder
    self.primaryPort = primaryPort
    self.standbyPorts = standbyPorts
    self.password = password
  }

  /// The folder of the primary, or of standby `index` (from 0).
  private static func directory(_ folder: TemporaryFolder, standby index: Int?) -> String {
    folder.path + (index.map { "/standby\($0)" } ?? "/primary")
  }

  /// Runs `body` with a primary and `standbys`, all removed afterwards, also when `body` throws;
  /// skips the test, saying why, where the server programs cannot run.
  static func with<R>(_ standbys: [Standby], _ body: (StandbyClusters) async throws -> R) async throws -> R {
    if let reason = whyServersCannotRun() {
      print("Skipped a standby test: \(reason)")
      try Test.cancel("Skipped: \(reason)")
    }
    let folder = try TemporaryFolder("coffer-pg-standbys")
    var started = 0
    do {
      let primaryPort = try port(
        in: try await run("test-postgres", ["start", directory(folder, standby: nil)]))
      var standbyPorts: [Int] = []
      for (index, standby) in standbys.enumerated() {
        var arguments = ["start"]
        if !standby.synchronous { arguments.append("--async") }
        if let delay = standby.applyDelayMilliseconds { arguments += ["--apply-delay", String(delay)] }
        arguments += [directory(folder, standby: nil), directory(folder, standby: index)]
        started = index + 1
        standbyPorts.append(try port(in: try await run("test-postgres-standby", arguments)))
      }
      let password = try String(
        contentsOfFile: directory(folder, standby: nil) + "/password", encoding: .utf8
      )
      .trimmingCharacters(in: .whitespacesAndNewlines)
      let clusters = StandbyClusters(
        folder: folder, primaryPort: primaryPort, standbyPorts: standbyPorts, password: password)
      let result = try await body(clusters)
      await remove(folder, standbys: standbys.count)
      return result
    } catch {
      await remove(folder, standbys: max(started, standbys.count))
      throw error
    }
  }

  /// Stops every server and removes its folder.
  private static func remove(_ folder: TemporaryFolder, standbys: Int) async {
    for index in 0..<standbys {
      _ = try? await run("test-postgres", ["stop", directory(folder, standby: index)])
    }
    _ = try? await run("test-postgres", ["stop", directory(folder, standby: nil)])
  }

  /// The primary and every standby, in that order, as `127.0.0.1:PORT`.
  var hosts: [String] { ([primaryPort] + standbyPorts).map { "127.0.0.1:\($0)" } }

  /// A configuration naming the primary and every standby, with `options` (`reads=standby`, …).
  func configuration(_ options: String) throws -> PostgresBackend.Configuration {
    var configuration = try PostgresBackend.Configuration(
      url: StoreURL(
        "postgres://coffer@\(hosts.joined(separator: ","))/coffer?tls=disable&connectTimeout=5&\(options)"),
      environment: [:])
    configuration.password = password
    return configuration
  }

  /// The URL of `configuration(options)` with the password in it, for the conformance suite.
  func url(_ options: String) -> String {
    "postgres://coffer:\(password)@\(hosts.joined(separator: ","))/coffer?tls=disable&connectTimeout=5&\(options)"
  }

  /// Stops standby `index` at once, as a crash would.
  func killStandby(_ index: Int) async throws {
    _ = try await Self.run("test-postgres-standby", ["kill", Self.directory(folder, standby: index)])
  }

  /// Starts standby `index` again on its port.
  func restartStandby(_ index: Int) async throws {
    _ = try await Self.run("test-postgres", ["restart", Self.directory(folder, standby: index)])
  }

  /// The package's `scripts` folder, found from this file's place in it.
  static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("scripts").path

  /// Why the PostgreSQL server programs cannot run here, or `nil` when they can.
  static func whyServersCannotRun() -> String? {
    let folders =
      ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []).map {
        "/usr/lib/postgresql/\($0)/bin"
      } + (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
    let programs = ["initdb", "pg_ctl", "pg_basebackup", "postgres", "psql"]
    guard
      folders.contains(where: { folder in
        programs.allSatisfy { FileManager.default.isExecutableFile(atPath: folder + "/" + $0) }
      })
    else {
      return "PostgreSQL's server programs (\(programs.joined(separator: ", "))) are not installed here; "
        + "install the postgresql package (make test does)."
    }
    if getuid() == 0, getpwnam("postgres") == nil {
      return "this runs as root, and initdb refuses root: the server runs as the `postgres` system user, "
        + "which does not exist here (the postgresql package creates it)."
    }
    return nil
  }

  /// The port of the store URL a script printed last.
  static func port(in printed: String) throws -> Int {
    let line = printed.split(separator: "\n").last.map(String.init) ?? ""
    guard let url = try? StoreURL(line), let port = url.port else {
      throw CofferError(.backendFailure, "The script printed no store URL: \(printed.suffix(500))")
    }
    return port
  }

  /// Runs a script of the package with bash, off the concurrency pool's threads, and returns what
  /// it printed; throws with its output when it fails.
  static func run(_ script: String, _ arguments: [String]) async throws -> String {
    let ran = try await ChildProcess.run("/bin/bash", [scripts + "/" + script] + arguments)
    guard ran.termination == .exited(0) else {
      throw CofferError(
        .backendFailure,
        "scripts/\(script) \(arguments.first ?? "") failed (\(ran.termination)): \((ran.errors + ran.output).suffix(1000))"
      )
    }
    return ran.output
  }
}
