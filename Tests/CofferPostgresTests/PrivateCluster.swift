@_spi(Backend) import Coffer
import CofferChildProcess
import CofferTestSupport
import Foundation
import Testing

/// A PostgreSQL cluster of one test's own, made with `scripts/test-postgres` in a temporary
/// folder, so that the test can kill and restart the server without disturbing other tests.
final class PrivateCluster {
  /// The folder the script made (data, log, port, password); removed by ``remove()``.
  let directory: String
  /// The store URL, with the password in it: this cluster's password is not `PGPASSWORD`.
  let url: StoreURL
  /// The cluster's password.
  let password: String
  private let folder: TemporaryFolder

  /// `scripts/test-postgres`, found from this file's place in the package.
  static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("scripts/test-postgres").path

  private init(folder: TemporaryFolder, directory: String, url: StoreURL, password: String) {
    self.folder = folder
    self.directory = directory
    self.url = url
    self.password = password
  }

  /// Starts a cluster, or skips the test (with the script's reason) when the script cannot make
  /// one here: no PostgreSQL server programs, no `postgres` user to run them as root, …
  static func start() async throws -> PrivateCluster {
    let folder = try TemporaryFolder("coffer-pg-cluster")
    let directory = folder.path + "/cluster"
    let started = try await runScript("start", directory)
    guard started.termination == .exited(0), let printed = started.output.split(separator: "\n").last,
      let password = try? String(contentsOfFile: directory + "/password", encoding: .utf8)
    else {
      _ = try? await runScript("stop", directory)
      let reason = (started.errors + started.output).trimmingCharacters(in: .whitespacesAndNewlines)
      try Test.cancel("Skipped: scripts/test-postgres could not start a cluster here: \(reason.prefix(400))")
    }
    let base = try StoreURL(String(printed))
    let trimmed = password.trimmingCharacters(in: .whitespacesAndNewlines)
    let url = StoreURL(
      scheme: base.scheme, path: base.path, host: base.host, port: base.port, user: base.user,
      password: trimmed, options: ["connectTimeout": "10"])
    return PrivateCluster(folder: folder, directory: directory, url: url, password: trimmed)
  }

  private static func runScript(_ command: String, _ directory: String) async throws -> ChildProcess.Captured
  {
    try await ChildProcess.run("/bin/bash", [script, command, directory])
  }

  private func runScript(_ command: String) async throws -> ChildProcess.Captured {
    try await Self.runScript(command, directory)
  }

  /// Stops the server at once, as a crash or a power cut would (`pg_ctl stop -m immediate`):
  /// no checkpoint, so the next start recovers from the write-ahead log.
  func kill() async throws {
    let run = try await runScript("kill")
    guard run.termination == .exited(0) else { throw PSQLFailure(sql: "kill", output: run.errors) }
  }

  /// Starts the server again on the same data directory and port.
  func restart() async throws {
    let run = try await runScript("restart")
    guard run.termination == .exited(0) else { throw PSQLFailure(sql: "restart", output: run.errors) }
  }

  /// Stops the server (if it runs) and removes its folder.
  func remove() async {
    _ = try? await runScript("stop")
  }

  /// Runs `body` with a new cluster, which is removed afterwards, also when `body` throws.
  static func with<R>(_ body: (PrivateCluster) async throws -> R) async throws -> R {
    let cluster = try await start()
    do {
      let result = try await body(cluster)
      await cluster.remove()
      return result
    } catch {
      await cluster.remove()
      throw error
    }
  }
}
