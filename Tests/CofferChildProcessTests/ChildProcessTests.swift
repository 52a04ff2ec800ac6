import CofferChildProcess
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The `posix_spawn` helper the tests and the conformance suite start other processes with.
@Suite struct ChildProcessTests {
  /// One mebibyte: far more than a pipe holds (64 KiB on Linux), so a reader that served one
  /// stream and ignored the other would deadlock.
  static let megabyte = 1 << 20

  @Test func aChildsExitStatusIsReported() throws {
    #expect(try ChildProcess.run("/bin/sh", ["-c", "exit 3"]).termination == .exited(3))
    #expect(try ChildProcess.run("/bin/sh", ["-c", "true"]).termination == .exited(0))
  }

  @Test func bothOutputStreamsAreCapturedInFullEvenBeyondAPipesCapacity() throws {
    // A megabyte to standard error first, then one to standard output: reading standard output
    // to its end before standard error would leave the child blocked on a full pipe forever.
    let script = """
      head -c \(Self.megabyte) /dev/zero | tr '\\000' e >&2
      head -c \(Self.megabyte) /dev/zero | tr '\\000' o
      """
    let run = try ChildProcess.run("sh", ["-c", script])
    #expect(run.termination == .exited(0))
    #expect(run.standardOutput.count == Self.megabyte)
    #expect(run.standardOutput.allSatisfy { $0 == UInt8(ascii: "o") })
    #expect(run.standardError.count == Self.megabyte)
    #expect(run.standardError.allSatisfy { $0 == UInt8(ascii: "e") })
  }

  @Test func inputBeyondAPipesCapacityReachesTheChildWhileItsOutputIsRead() throws {
    let input = (0..<Self.megabyte).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let run = try ChildProcess.run("cat", input: input)
    #expect(run.termination == .exited(0))
    #expect(run.standardOutput == input)
  }

  @Test func standardErrorCanGoIntoStandardOutput() throws {
    let run = try ChildProcess.run(
      "/bin/sh", ["-c", "echo one; echo two >&2; echo three"], standardErrorIntoOutput: true)
    #expect(run.output == "one\ntwo\nthree\n")
    #expect(run.standardError.isEmpty)
  }

  @Test func aKilledChildReportsTheSignal() async throws {
    let child = try ChildProcess("sleep", ["60"])
    #expect(child.termination == nil)
    child.kill(SIGKILL)
    #expect(await child.waitUntilExit() == .signaled(SIGKILL))
    #expect(child.termination == .signaled(SIGKILL))
    child.kill(SIGKILL)  // Reaped: sends nothing, to this or any other process.
  }

  @Test(.timeLimit(.minutes(1)))
  func waitingForAChildLeavesTheConcurrencyPoolFree() async throws {
    // More waiting tasks than the pool has threads, for children that end only when this task
    // closes their input after a sleep: if each wait blocked a pool thread, this task could
    // never run again and nothing would end.
    let children = try (0..<8).map { _ in
      try ChildProcess("cat", standardInput: .pipe, standardOutput: .nullDevice)
    }
    async let ends = withTaskGroup(of: ChildProcess.Termination.self) { group in
      for child in children { group.addTask { await child.waitUntilExit() } }
      return await group.reduce(into: []) { $0.append($1) }
    }
    try await Task.sleep(for: .milliseconds(100))
    for child in children { child.standardInput.close() }
    #expect(await ends == Array(repeating: .exited(0), count: children.count))
  }

  @Test func aRunningChildIsWrittenToAndReadFromThroughItsPipes() async throws {
    let child = try ChildProcess("cat", standardInput: .pipe, standardOutput: .pipe)
    try child.standardInput.write(Array("ready\n".utf8))
    #expect(try await child.standardOutput.read(until: "ready") == Array("ready\n".utf8))
    try child.standardInput.write(Array("more".utf8))
    child.standardInput.close()
    #expect(try await child.standardOutput.readToEnd() == Array("more".utf8))
    #expect(await child.waitUntilExit() == .exited(0))
  }

  @Test func writingToAChildThatStoppedReadingThrowsInsteadOfRaisingSIGPIPE() throws {
    let child = try ChildProcess("/bin/sh", ["-c", "exec 0<&-; true"], standardInput: .pipe)
    #expect(child.waitUntilExit() == .exited(0))
    #expect(throws: ChildProcess.IOFailure.self) {
      try child.standardInput.write(Array(repeating: 0, count: Self.megabyte))
    }
  }

  @Test func aNameIsLookedUpInThePATHOfTheChildsEnvironment() throws {
    let run = try ChildProcess.run(
      "sh", ["-c", "echo $COFFER_GREETING; pwd"],
      environment: ["PATH": "/usr/bin:/bin", "COFFER_GREETING": "hi"],
      currentDirectory: "/")
    #expect(run.output == "hi\n/\n")
    #expect(throws: ChildProcess.LaunchFailure.self) {
      try ChildProcess.run("sh", environment: ["PATH": "/nonexistent"])
    }
  }

  #if os(Linux)
    @Test func aChildInheritsNoDescriptorButItsStandardStreams() throws {
      let leaked = open("/dev/null", O_RDONLY)  // Without O_CLOEXEC, as some C libraries open files.
      defer { close(leaked) }
      #expect(leaked > 2)
      let run = try ChildProcess.run("/bin/sh", ["-c", "ls /proc/$$/fd"])
      #expect(run.output.split(separator: "\n").sorted() == ["0", "1", "2"])
    }
  #endif
}
