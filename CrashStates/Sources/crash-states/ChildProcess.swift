import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A child process started with `posix_spawn`, its standard output read line by line with a
/// deadline (so a child that hangs is noticed and killed), its standard error sent to a file.
final class ChildProcess {
  /// How a child ended.
  enum Ending: Equatable {
    case exited(Int32)
    case signaled(Int32)

    /// `exit 3`, or `signal 11 (SIGSEGV)`-style text.
    var description: String {
      switch self {
      case .exited(let code): "exit status \(code)"
      case .signaled(let signal): "killed by signal \(signal) (\(String(cString: strsignal(signal))))"
      }
    }
  }

  /// What reading a line gave.
  enum Line {
    case text(String)
    case end
    case timedOut
  }

  /// The child's process id.
  let pid: pid_t
  private let output: Int32
  private var buffer: [UInt8] = []
  private var ended = false

  /// This program's own executable, for starting it again in another mode.
  static func ownExecutable() throws -> String {
    var bytes = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink("/proc/self/exe", &bytes, Int(PATH_MAX))
    guard count > 0 else { throw ExplorerFailure("cannot find this program's executable") }
    return String(decoding: bytes[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Starts `arguments[0]` with the other arguments and this environment plus `extraEnvironment`.
  init(_ arguments: [String], extraEnvironment: [String: String] = [:], errorLog: String) throws {
    var pipeEnds: [Int32] = [0, 0]
    guard pipe(&pipeEnds) == 0 else { throw ExplorerFailure("cannot make a pipe") }
    // Neither end may leak into another child; the child's copy on descriptor 1 is made by dup2.
    for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
    posix_spawn_file_actions_addopen(&actions, 2, errorLog, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    var environment = ProcessInfo.processInfo.environment
    for (key, value) in extraEnvironment { environment[key] = value }
    let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp { free(pointer) }
    }
    var child: pid_t = 0
    let status = posix_spawn(&child, arguments[0], &actions, nil, argv, envp)
    close(pipeEnds[1])
    guard status == 0 else {
      close(pipeEnds[0])
      throw ExplorerFailure("cannot start \(arguments[0]): \(String(cString: strerror(status)))")
    }
    pid = child
    output = pipeEnds[0]
  }

  deinit { close(output) }

  /// The next line of output, waiting at most `seconds` for it.
  func readLine(timeout seconds: Double) -> Line {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return .text(line)
      }
      if ended { return .end }
      let left = deadline.timeIntervalSinceNow
      if left <= 0 { return .timedOut }
      var entry = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
      let ready = poll(&entry, 1, Int32(min(left * 1000, 60_000)) + 1)
      if ready < 0, errno == EINTR { continue }
      if ready <= 0 { continue }
      var chunk = [UInt8](repeating: 0, count: 65_536)
      let count = read(output, &chunk, chunk.count)
      if count < 0, errno == EINTR { continue }
      if count <= 0 {
        ended = true
      } else {
        buffer.append(contentsOf: chunk[0..<count])
      }
    }
  }

  /// Kills the child (a hang).
  func kill() { _ = Glibc.kill(pid, SIGKILL) }

  /// Waits for the child to end.
  func wait() -> Ending {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    let signal = status & 0x7f
    return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
  }
}
