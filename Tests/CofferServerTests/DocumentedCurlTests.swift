@_spi(Backend) import Coffer
import CofferChildProcess
import CofferMemory
import Foundation
import Testing

@testable import CofferServer

/// The curl commands of the Server article ("Trying it with curl"), run as written with the real
/// curl against a server on a loopback port: a reader who pastes them gets what the article
/// promises.
@Suite("The Server article's curl examples")
struct DocumentedCurlTests {
  /// Where curl is, or nil when this machine has none (`make test` installs it).
  static let curl = ["/usr/bin/curl", "/usr/local/bin/curl", "/bin/curl"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  /// The article's shell commands, each joined across its continued lines.
  static func documentedCommands() throws -> [String] {
    let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Sources/Coffer/Coffer.docc/Server.md")
    let text = try String(contentsOf: article, encoding: .utf8)
    guard let heading = text.range(of: "### Trying it with curl"),
      let open = text.range(of: "```sh\n", range: heading.upperBound..<text.endIndex),
      let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex)
    else {
      Issue.record("Server.md has no \"Trying it with curl\" block.")
      return []
    }
    var commands: [String] = []
    var current = ""
    for line in text[open.upperBound..<close.lowerBound].split(
      separator: "\n", omittingEmptySubsequences: false)
    {
      current += current.isEmpty ? String(line) : "\n" + line
      // A command goes on while its last line ends with a backslash or a quote is open.
      let quotes = current.filter { $0 == "'" }.count
      if !current.hasSuffix("\\") && quotes % 2 == 0 {
        commands.append(current)
        current = ""
      }
    }
    return commands.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
  }

  @Test(
    "every command runs against a live server and answers as the article says",
    .enabled(if: curl != nil, "curl is not installed (make test installs it)"))
  func documentedCommandsWork() async throws {
    let commands = try Self.documentedCommands()
    #expect(commands.count == 6)
    let token = "documented-curl-token-0123456789"
    let store = Store(backend: MemoryBackend())
    try await store.recordChanges()
    let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
    var configuration = CofferServer.Configuration(
      port: 0, tokens: [.init(secret: token, scopes: [.write])])
    configuration.onListening = { port in
      portSink.yield(port)
      portSink.finish()
    }
    let server = CofferServer(store: store, configuration: configuration)
    let serving = Task { try await server.run() }
    defer { serving.cancel() }
    var port = 0
    for await found in ports { port = found }
    #expect(port > 0)

    var answers: [String] = []
    for command in commands {
      var line = command.replacingOccurrences(of: "http://127.0.0.1:8080", with: "http://127.0.0.1:\(port)")
      // The stream never ends by itself: curl stops it after a while (the one batch comes at once).
      let streams = line.contains("/v1/changes/stream")
      if streams { line = line.replacingOccurrences(of: "curl -sN", with: "curl -sN --max-time 10") }
      let (status, output) = try await Self.shell(line, token: token)
      #expect(status == 0 || (streams && status == 28), "\(command) exited with \(status)")
      answers.append(output)
    }
    #expect(answers[0].contains(#""status":"ok""#))
    #expect(
      answers[1].contains(#""capabilities""#) && answers[1].contains(#""maxRows""#), "store: \(answers[1])")
    #expect(!answers[2].contains(#""error""#), "prepare: \(answers[2])")
    #expect(answers[3].contains(#""inserted":1"#), "apply: \(answers[3])")
    #expect(answers[4].contains("Milk"), "read: \(answers[4])")
    #expect(answers[5].contains("data:") && answers[5].contains("Milk"), "stream: \(answers[5])")
    let note = try #require(try await store.storedSchemas().first { $0.name == "Note" })
    let stored = try await store.backend.get(entity: note, ids: [.int(1)])
    #expect(stored.first?[1] == .string("Milk"))
    serving.cancel()
    _ = try? await serving.value
    try await store.close()
  }

  /// Runs `command` with `sh -c`, `TOKEN` in its environment, and returns its exit status and
  /// standard output. The wait runs off the concurrency pool, whose threads the server in this
  /// process needs to answer the command.
  static func shell(_ command: String, token: String) async throws -> (Int32, String) {
    var environment = ProcessInfo.processInfo.environment
    environment["TOKEN"] = token
    let run = try await ChildProcess.run("/bin/sh", ["-c", command], environment: environment)
    return (run.termination.status, run.output)
  }
}
