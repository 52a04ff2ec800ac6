import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A TCP proxy on loopback between a client and a server, that can lose or hold back the
/// server's answers: the faults of a network a test cannot otherwise make happen on purpose.
///
/// Each accepted connection is piped to the server by two threads of its own (blocking socket
/// calls, never on the concurrency pool). What happens to the bytes the server sends back is
/// the proxy's ``mode`` when the first of them arrives.
final class FaultyProxy: @unchecked Sendable {
  // `@unchecked Sendable`: `state` is guarded by `lock`; the descriptors are set once in `init`.
  enum Mode: Sendable, Equatable {
    /// Pass every byte both ways.
    case pass
    /// Forward the request, read the server's answer to its first byte (the server has acted on
    /// the request by then), drop it and close the client's connection; then go back to `pass`.
    case loseNextAnswer
    /// Hold every answer back this long before passing it on.
    case delay(Duration)
  }

  private let lock = NSLock()
  private var mode = Mode.pass
  private var lostAnswers = 0
  private var open: [Int32] = []
  private let listener: Int32
  private let upstreamPort: UInt16
  /// The port the proxy listens on.
  let port: Int

  /// A proxy in front of `127.0.0.1:upstream`, listening on a free loopback port.
  init(upstream: Int) throws {
    upstreamPort = UInt16(upstream)
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
    var yes: Int32 = 1
    setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    var address = Self.loopback(port: 0)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(descriptor, 64) == 0 else {
      close(descriptor)
      throw POSIXError(.EADDRINUSE)
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    listener = descriptor
    port = Int(UInt16(bigEndian: address.sin_port))
    let thread = Thread { [self] in acceptLoop() }
    thread.start()
  }

  /// Sets what happens to the next answers.
  func set(_ mode: Mode) { lock.withLock { self.mode = mode } }

  /// How many answers the proxy has dropped.
  var answersLost: Int { lock.withLock { lostAnswers } }

  /// Stops accepting and closes every connection.
  func stop() {
    shutdown(listener, Int32(SHUT_RDWR))
    close(listener)
    let descriptors = lock.withLock { () -> [Int32] in
      defer { open = [] }
      return open
    }
    for descriptor in descriptors { shutdown(descriptor, Int32(SHUT_RDWR)) }
  }

  private static func loopback(port: UInt16) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
  }

  private func acceptLoop() {
    while true {
      let client = accept(listener, nil, nil)
      guard client >= 0 else { return }
      let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      var address = Self.loopback(port: upstreamPort)
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      guard connected == 0 else {
        close(client)
        close(server)
        continue
      }
      lock.withLock { open += [client, server] }
      let pair = Pair(client: client, server: server)
      Thread { [self] in
        pipe(from: client, to: server, answers: false)
        pair.done(self)
      }.start()
      Thread { [self] in
        pipe(from: server, to: client, answers: true)
        pair.done(self)
      }.start()
    }
  }

  /// The two ends of one piped connection, closed when both of its threads are done.
  private final class Pair: @unchecked Sendable {
    // `@unchecked Sendable`: `running` is changed only under the proxy's lock.
    let client: Int32
    let server: Int32
    var running = 2

    init(client: Int32, server: Int32) {
      self.client = client
      self.server = server
    }

    func done(_ proxy: FaultyProxy) {
      let last = proxy.lock.withLock { () -> Bool in
        running -= 1
        if running == 0 { proxy.open.removeAll { $0 == client || $0 == server } }
        return running == 0
      }
      if last {
        close(client)
        close(server)
      }
    }
  }

  private func pipe(from source: Int32, to destination: Int32, answers: Bool) {
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    defer {
      shutdown(source, Int32(SHUT_RDWR))
      shutdown(destination, Int32(SHUT_RDWR))
    }
    while true {
      let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
      guard count > 0 else { return }
      if answers {
        let now = lock.withLock { () -> Mode in
          let now = mode
          if now == .loseNextAnswer {
            mode = .pass
            lostAnswers += 1
          }
          return now
        }
        switch now {
        case .pass: break
        case .loseNextAnswer: return
        case .delay(let pause):
          let (seconds, attoseconds) = pause.components
          Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
        }
      }
      var sent = 0
      while sent < count {
        let written = buffer.withUnsafeBytes { write(destination, $0.baseAddress! + sent, count - sent) }
        guard written > 0 else { return }
        sent += written
      }
    }
  }
}
