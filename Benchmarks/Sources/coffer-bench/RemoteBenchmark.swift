import AsyncHTTPClient
import Coffer
import CofferServer
import CofferStores
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOPosix

/// The remote backend over loopback (issue 44), beside the physical limit of the HTTP hop: one
/// `CofferServer` in this process serves an SQLite store of `--remote-rows` chat messages
/// (default 100,000), and carries two bare Hummingbird routes of the benchmark's own that read
/// the same store in-process and answer JSON (`GET /bare/messages/ID`, `GET /bare/threads/ID`,
/// the thread's newest 50). A `coffer+http://` store reads through the API; the bare routes are
/// read with async-http-client, the client library the remote backend uses, each answer decoded
/// into `ChatMessage` values.
///
/// Measured, the two taking turns within each of `--repetitions` (default 3): point gets and
/// thread pages one at a time (p50 over every sample), 8 tasks doing point gets at once for
/// `--remote-seconds` (default 3), and — once, before the reads — the bulk insert of every
/// message through the client into the served store, beside the same insert into a local SQLite
/// store. Every answer is compared with the messages inserted.
///
/// `coffer-bench --remote [--remote-rows N] [--remote-gets N] [--remote-seconds N] [--repetitions N]
/// [--output DIR] [--no-write]`
enum RemoteBenchmark {
  static let flag = "--remote"
  static let clients = 8

  static func run(_ arguments: [String]) async throws {
    var rows = 100_000
    var gets = 2_000
    var seconds = 3
    let options = try WorkloadArguments(
      arguments, flag: flag, enginesOption: "--remote-engines", repetitions: 3, engines: []
    ) { argument, number in
      switch argument {
      case "--remote-rows": rows = try number()
      case "--remote-gets": gets = try number()
      case "--remote-seconds": seconds = try number()
      default: return false
      }
      return true
    }
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    say(
      "coffer-bench: the remote backend over loopback, \(rows.formatted()) messages served from SQLite, "
        + "\(options.repetitions) repetitions, beside bare Hummingbird routes")
    let folder = try ScratchFolder("remote")
    defer { folder.remove() }
    let messages = Workload.messages(rows)
    let registry = BackendRegistry.makeBuiltIn()

    // The served store, and the server with the bare routes beside the API.
    let served = try await Store.open(url: "sqlite://\(folder.file("served.sqlite"))", registry: registry)
    try await served.prepare([ChatMessage.self])
    let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
    var configuration = CofferServer.Configuration(port: 0, maxConnections: 64)
    configuration.onListening = { port in
      portSink.yield(port)
      portSink.finish()
    }
    configuration.additionalRoutes = [{ router in BareRoutes.add(to: router, store: served) }]
    let server = CofferServer(store: served, configuration: configuration)
    let serving = Task { try await server.run() }
    defer { serving.cancel() }
    var port = 0
    for await found in ports { port = found }
    guard port > 0 else { throw BenchError("the server did not start listening") }

    let remote = try await Store.open(url: "coffer+http://127.0.0.1:\(port)", registry: registry)
    try await remote.prepare([ChatMessage.self])
    let bare = BareClient(port: port)

    // Bulk insert: through the client into the served store, and into a local store.
    let clock = ContinuousClock()
    var start = clock.now
    try await remote.insert(messages)
    let remoteInsert = clock.now - start
    let local = try await Store.open(url: "sqlite://\(folder.file("local.sqlite"))", registry: registry)
    try await local.prepare([ChatMessage.self])
    start = clock.now
    try await local.insert(messages)
    let localInsert = clock.now - start
    try await local.close()
    say(
      "  bulk insert: remote \(Measure.milliseconds(remoteInsert)), local \(Measure.milliseconds(localInsert))"
    )

    var random = SplitMix64(state: 11)
    let ids = (0..<max(gets, 200_000)).map { _ in messages[random.below(messages.count)].id }
    let threads = (0..<gets).map { _ in Int64(random.below(Workload.threads)) }
    var getSamples: [String: [Duration]] = [:]
    var pageSamples: [String: [Duration]] = [:]
    var rates: [String: [Double]] = [:]
    for repetition in 1...options.repetitions {
      for (name, get) in [
        ("bare", { (id: Int64) in try await bare.message(id) }),
        ("remote", { (id: Int64) in try await remote.get(ChatMessage.self, id: id) }),
      ] as [(String, (Int64) async throws -> ChatMessage?)] {
        for id in ids.prefix(gets) {
          let start = clock.now
          let message = try await get(id)
          getSamples[name, default: []].append(clock.now - start)
          guard same(message, messages[Int(id) - 1]) else {
            throw BenchError("\(name): message \(id) read wrong")
          }
        }
      }
      for (name, page) in [
        ("bare", { (thread: Int64) in try await bare.page(thread) }),
        ("remote", { (thread: Int64) in try await Self.page(thread, in: remote) }),
      ] as [(String, (Int64) async throws -> [ChatMessage])] {
        for thread in threads.prefix(max(1, gets / 4)) {
          let start = clock.now
          let page = try await page(thread)
          pageSamples[name, default: []].append(clock.now - start)
          guard page.count <= 50,
            page.allSatisfy({ $0.threadID == thread && same($0, messages[Int($0.id) - 1]) })
          else { throw BenchError("\(name): the page of thread \(thread) read wrong") }
        }
      }
      rates["bare", default: []].append(
        try await throughput(ids, messages, for: .seconds(seconds)) { try await bare.message($0) })
      rates["remote", default: []].append(
        try await throughput(ids, messages, for: .seconds(seconds)) {
          try await remote.get(ChatMessage.self, id: $0)
        })
      say(
        "  repetition \(repetition): 8 tasks bare \(Int(rates["bare"]?.last ?? 0))/s, "
          + "remote \(Int(rates["remote"]?.last ?? 0))/s")
    }
    try await remote.close()
    try await bare.shutdown()
    serving.cancel()
    _ = try? await serving.value
    try await served.close()

    func p50(_ samples: [Duration]?) -> Double { Measure.seconds(Measure.median(samples ?? [.zero])) }
    func median(_ values: [Double]?) -> Double { (values ?? [0]).sorted()[(values ?? [0]).count / 2] }
    let get = (bare: p50(getSamples["bare"]), remote: p50(getSamples["remote"]))
    let page = (bare: p50(pageSamples["bare"]), remote: p50(pageSamples["remote"]))
    let rate = (bare: median(rates["bare"]), remote: median(rates["remote"]))
    let insertRate = (
      remote: Double(rows) / Measure.seconds(remoteInsert), local: Double(rows) / Measure.seconds(localInsert)
    )
    func verdict(_ met: Bool) -> String { met ? "met" : "**not met**" }
    let text = [
      "# The remote backend over loopback",
      "",
      "Written by `\(command)`: \(rows.formatted()) chat messages in an SQLite store served by `CofferServer` in "
        + "the benchmark's process on a loopback port, read by a `coffer+http://` store, beside two bare "
        + "Hummingbird routes added to the same server that read the same store in-process and answer JSON, read "
        + "with async-http-client (the remote backend's client library) and decoded into values. Point gets and "
        + "thread pages (the newest 50 of a thread) one at a time: p50 of \(gets.formatted()) gets and "
        + "\(max(1, gets / 4).formatted()) pages per repetition; \(clients) tasks doing point gets at once for "
        + "\(seconds) s; the two take turns within each of \(options.repetitions) repetitions. The bulk insert "
        + "of every message, through the client into the served store and into a local SQLite store, ran once "
        + "before the reads. \(load.finish().sentence) The server runs in this process. "
        + "Machine: \(machineDescription()).",
      "",
      "| | bare route | remote | ratio | goal |",
      "|---|---:|---:|---:|---|",
      String(
        format: "| point get, p50 | %.1f µs | %.1f µs | %.2fx | ≤ 1.5x: %@ |", get.bare * 1e6,
        get.remote * 1e6,
        get.remote / get.bare, verdict(get.remote <= 1.5 * get.bare)),
      String(
        format: "| thread page of 50, p50 | %.1f µs | %.1f µs | %.2fx | ≤ 1.5x: %@ |", page.bare * 1e6,
        page.remote * 1e6, page.remote / page.bare, verdict(page.remote <= 1.5 * page.bare)),
      String(
        format: "| %d tasks, point gets per second | %.0f | %.0f | %.2fx | ≥ 0.8x: %@ |", clients, rate.bare,
        rate.remote, rate.remote / rate.bare, verdict(rate.remote >= 0.8 * rate.bare)),
      "",
      "| bulk insert of \(rows.formatted()) messages | local SQLite store | through the client | ratio | goal |",
      "|---|---:|---:|---:|---|",
      String(
        format: "| rows per second | %.0f | %.0f | %.2fx | ≥ 0.5x: %@ |", insertRate.local, insertRate.remote,
        insertRate.remote / insertRate.local, verdict(insertRate.remote >= 0.5 * insertRate.local)),
      "",
    ].joined(separator: "\n")
    print(text)
    if options.write { try writeReport(text, named: "RemoteSpeed.md", to: options.output) }
  }

  /// Whether a message read is the one inserted: equal, its date to the microsecond stores keep.
  static func same(_ read: ChatMessage?, _ inserted: ChatMessage) -> Bool {
    guard var read else { return false }
    guard abs(read.date.timeIntervalSince(inserted.date)) < 1e-6 else { return false }
    read.date = inserted.date
    return read == inserted
  }

  /// The suite's thread page.
  static func page(_ thread: Int64, in store: Store) async throws -> [ChatMessage] {
    try await store.query(ChatMessage.self).filter(\.threadID == thread).sort(\.date, .descending)
      .limit(50).fetch()
  }

  /// Gets per second from ``clients`` tasks at once for `duration`, each read checked.
  static func throughput(
    _ ids: [Int64], _ messages: [ChatMessage], for duration: Duration,
    _ get: @escaping @Sendable (Int64) async throws -> ChatMessage?
  ) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    let deadline = start + duration
    let done = try await inTasks(clients) { task in
      var done = 0
      for position in stride(from: task, to: ids.count, by: clients) {
        if done % 20 == 0 && ContinuousClock.now >= deadline { break }
        guard same(try await get(ids[position]), messages[Int(ids[position]) - 1]) else {
          throw BenchError("a concurrent get read message \(ids[position]) wrong")
        }
        done += 1
      }
      return done
    }
    return Double(done.reduce(0, +)) / Measure.seconds(clock.now - start)
  }
}

/// The bare routes: the least a server can do to answer a row over HTTP from the same store.
enum BareRoutes {
  static func add(to router: Router<BasicRequestContext>, store: Store) {
    router.get("bare/messages/:id") { _, context -> Response in
      let id = try context.parameters.require("id", as: Int64.self)
      guard let message = try await store.get(ChatMessage.self, id: id) else {
        return Response(status: .notFound)
      }
      return try json(message)
    }
    router.get("bare/threads/:id") { _, context -> Response in
      let thread = try context.parameters.require("id", as: Int64.self)
      return try json(try await RemoteBenchmark.page(thread, in: store))
    }
  }

  static func json(_ value: some Encodable) throws -> Response {
    let data = try JSONEncoder().encode(value)
    return Response(
      status: .ok, headers: [.contentType: "application/json"],
      body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
  }
}

/// async-http-client set up as the remote backend sets it up, reading the bare routes.
struct BareClient: Sendable {
  let client: HTTPClient
  let base: String

  init(port: Int) {
    var settings = HTTPClient.Configuration()
    settings.decompression = .disabled
    settings.redirectConfiguration = .disallow
    settings.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = RemoteBenchmark.clients
    settings.httpVersion = .http1Only
    client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: settings)
    base = "http://127.0.0.1:\(port)"
  }

  func message(_ id: Int64) async throws -> ChatMessage? {
    let body = try await get("/bare/messages/\(id)")
    return try body.map { try JSONDecoder().decode(ChatMessage.self, from: $0) }
  }

  func page(_ thread: Int64) async throws -> [ChatMessage] {
    try JSONDecoder().decode(
      [ChatMessage].self, from: try await get("/bare/threads/\(thread)") ?? Data("[]".utf8))
  }

  /// The body of a 200 answer, nil for a 404.
  private func get(_ path: String) async throws -> Data? {
    let response = try await client.execute(HTTPClientRequest(url: base + path), timeout: .seconds(30))
    let body = try await response.body.collect(upTo: 1 << 24)
    if response.status.code == 404 { return nil }
    guard response.status.code == 200 else { throw BenchError("GET \(path): \(response.status)") }
    return Data(body.readableBytesView)
  }

  func shutdown() async throws { try await client.shutdown() }
}
