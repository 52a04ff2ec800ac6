#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The `posix_spawn` call behind ``ChildProcess``: file actions for the three streams,
/// attributes that reset signals, and the C strings of the arguments and environment.
enum Spawn {
  /// A started child and this process's ends of its pipes (`-1` where a stream is no pipe).
  struct Started {
    /// The child's process id.
    var id: pid_t
    /// The write end of the child's standard input pipe.
    var input: Int32
    /// The read end of the child's standard output pipe.
    var output: Int32
    /// The read end of the child's standard error pipe.
    var error: Int32
  }

  /// Starts the child as ``ChildProcess/init(_:_:environment:currentDirectory:standardInput:standardOutput:standardError:)``
  /// describes; on failure, closes every pipe it made and throws ``ChildProcess/LaunchFailure``.
  static func start(
    _ executable: String, _ arguments: [String], environment: [String: String]?, currentDirectory: String?,
    streams: (input: ChildProcess.Input, output: ChildProcess.Output, error: ChildProcess.Output)
  ) throws -> Started {
    let failure = { (reason: String) in ChildProcess.LaunchFailure(executable: executable, reason: reason) }
    guard let path = resolve(executable, environment: environment) else {
      throw failure("not found on PATH")
    }
    #if canImport(Darwin)
      var actions: posix_spawn_file_actions_t? = nil
      var attributes: posix_spawnattr_t? = nil
    #else
      var actions = posix_spawn_file_actions_t()
      var attributes = posix_spawnattr_t()
    #endif
    posix_spawn_file_actions_init(&actions)
    posix_spawnattr_init(&attributes)
    defer {
      posix_spawn_file_actions_destroy(&actions)
      posix_spawnattr_destroy(&attributes)
    }

    // Parent ends are kept; child ends are closed once the child has its copies.
    var started = Started(id: 0, input: -1, output: -1, error: -1)
    var childEnds: [Int32] = []
    func closeAll() {
      for fd in childEnds + [started.input, started.output, started.error] where fd >= 0 { close(fd) }
    }
    do {
      switch streams.input {
      case .nullDevice: posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
      case .inherit: inherit(0, &actions)
      case .pipe:
        let ends = try makePipe(failure)
        (started.input, childEnds) = (ends.write, childEnds + [ends.read])
        posix_spawn_file_actions_adddup2(&actions, ends.read, 0)
      }
      for (target, output) in [(Int32(1), streams.output), (2, streams.error)] {
        switch output {
        case .nullDevice: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
        case .inherit: inherit(target, &actions)
        case .standardOutput: posix_spawn_file_actions_adddup2(&actions, 1, target)
        case .file(let file):
          posix_spawn_file_actions_addopen(&actions, target, file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        case .pipe:
          let ends = try makePipe(failure)
          childEnds.append(ends.write)
          if target == 1 { started.output = ends.read } else { started.error = ends.read }
          posix_spawn_file_actions_adddup2(&actions, ends.write, target)
        }
      }
      if let currentDirectory {
        guard addChangeDirectory(&actions, currentDirectory) else {
          throw failure("this C library cannot set a spawned process's working directory")
        }
      }
      setAttributes(&attributes, &actions)

      let argv = ([executable] + arguments).map { strdup($0) }
      let envp = environment.map { variables in variables.map { strdup("\($0.key)=\($0.value)") } }
      defer {
        for string in argv + (envp ?? []) { free(string) }
      }
      let code =
        if let envp {
          posix_spawn(&started.id, path, &actions, &attributes, argv + [nil], envp + [nil])
        } else {
          posix_spawn(&started.id, path, &actions, &attributes, argv + [nil], inherited)
        }
      guard code == 0 else { throw failure(String(cString: strerror(code))) }
    } catch {
      closeAll()
      throw error
    }
    for fd in childEnds { close(fd) }
    return started
  }

  /// This process's environment, passed on when the child is given none of its own.
  #if canImport(Darwin)
    private static var inherited: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
      _NSGetEnviron()?.pointee
    }
  #else
    private static var inherited: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> { environ }
  #endif

  /// The program `executable` names: itself when it has a slash, else the first executable
  /// file of that name in the `PATH` of `environment` (or of this process).
  private static func resolve(_ executable: String, environment: [String: String]?) -> String? {
    if executable.contains("/") { return executable }
    let searchPath: String?
    if let environment {
      searchPath = environment["PATH"]
    } else {
      searchPath = getenv("PATH").map { String(cString: $0) }
    }
    for folder in (searchPath ?? "/usr/bin:/bin").split(separator: ":") {
      let candidate = "\(folder)/\(executable)"
      var info = stat()
      if stat(candidate, &info) == 0, info.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG),
        access(candidate, X_OK) == 0
      {
        return candidate
      }
    }
    return nil
  }

  /// A pipe whose two ends are close-on-exec from the start, so that no other child started
  /// meanwhile (by another thread) inherits them and holds the pipe open.
  private static func makePipe(
    _ failure: (String) -> ChildProcess.LaunchFailure
  ) throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    guard ChildProcess.PipeEnd.makeCloseOnExecPipe(&fds) == 0 else {
      throw failure("pipe: \(String(cString: strerror(errno)))")
    }
    return (fds[0], fds[1])
  }

  #if canImport(Darwin)
    private static func inherit(_ fd: Int32, _ actions: inout posix_spawn_file_actions_t?) {
      // POSIX_SPAWN_CLOEXEC_DEFAULT closes every descriptor not named in a file action.
      posix_spawn_file_actions_addinherit_np(&actions, fd)
    }

    private static func addChangeDirectory(_ actions: inout posix_spawn_file_actions_t?, _ path: String)
      -> Bool
    {
      posix_spawn_file_actions_addchdir_np(&actions, path) == 0
    }

    private static func setAttributes(
      _ attributes: inout posix_spawnattr_t?, _ actions: inout posix_spawn_file_actions_t?
    ) {
      var defaults = sigset_t()
      var empty = sigset_t()
      sigfillset(&defaults)
      sigemptyset(&empty)
      posix_spawnattr_setsigdefault(&attributes, &defaults)
      posix_spawnattr_setsigmask(&attributes, &empty)
      posix_spawnattr_setflags(
        &attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_CLOEXEC_DEFAULT))
    }
  #else
    private static func inherit(_ fd: Int32, _ actions: inout posix_spawn_file_actions_t) {}

    private static func addChangeDirectory(_ actions: inout posix_spawn_file_actions_t, _ path: String)
      -> Bool
    {
      guard let addChangeDirectory = GNU.addChangeDirectory else { return false }
      return addChangeDirectory(&actions, path) == 0
    }

    private static func setAttributes(
      _ attributes: inout posix_spawnattr_t, _ actions: inout posix_spawn_file_actions_t
    ) {
      var defaults = sigset_t()
      var empty = sigset_t()
      sigfillset(&defaults)
      sigemptyset(&empty)
      posix_spawnattr_setsigdefault(&attributes, &defaults)
      posix_spawnattr_setsigmask(&attributes, &empty)
      posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
      // Descriptors other code opened without O_CLOEXEC (a C library's) stay in this process.
      _ = GNU.addCloseFrom.map { $0(&actions, 3) }
    }
  #endif
}

#if !canImport(Darwin)
  /// glibc functions Swift's Glibc module does not show (they are declared only with
  /// `_GNU_SOURCE`), looked up by name once; `nil` where the C library lacks one.
  enum GNU {
    /// `int pipe2(int fds[2], int flags)`.
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
    /// `int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *, const char *)`.
    typealias AddChangeDirectory =
      @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?) -> Int32
    /// `int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *, int from)`.
    typealias AddCloseFrom =
      @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

    /// `pipe2(2)` (glibc 2.9).
    static let pipe2 = lookUp("pipe2", as: Pipe2.self)
    /// `posix_spawn_file_actions_addchdir_np` (glibc 2.29).
    static let addChangeDirectory = lookUp(
      "posix_spawn_file_actions_addchdir_np", as: AddChangeDirectory.self)
    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34).
    static let addCloseFrom = lookUp("posix_spawn_file_actions_addclosefrom_np", as: AddCloseFrom.self)

    private static func lookUp<F>(_ name: String, as type: F.Type) -> F? {
      // dlopen(nil) is the program itself; dlsym on it searches every library it loaded.
      guard let symbol = dlsym(dlopen(nil, RTLD_NOW), name) else { return nil }
      return unsafeBitCast(symbol, to: type)
    }
  }
#endif
