import CofferTestSupport
import Foundation
import Testing

/// A store path that names a named pipe is refused at once by every file backend, never waited on.
@Suite struct SpecialFileTests {
  @Test(arguments: ["plist", "sqlite", "lmdb"])
  func aNamedPipeIsRefusedAtOnce(scheme: String) async throws {
    let folder = try TemporaryFolder("coffer-fifo-\(scheme)")
    let path = folder.file("pipe")
    #expect(mkfifo(path, 0o600) == 0)
    // Should a command wait on the pipe, a writer opening it after a while ends that wait (the
    // reader then sees an empty file), so the test fails on the message rather than hanging.
    let unblocker = Thread {
      Thread.sleep(forTimeInterval: 30)
      let descriptor = open(path, O_WRONLY | O_NONBLOCK)
      if descriptor >= 0 { close(descriptor) }
    }
    unblocker.start()
    let run = try await CommandRun.coffer(["inspect", "\(scheme)://\(path)"])
    #expect(run.status != 0)
    #expect(run.errorOutput.contains("coffer: opening the store"), "\(run.errorOutput)")
    if scheme == "plist" {
      #expect(run.errorOutput.contains("is not a regular file"), "\(run.errorOutput)")
    }
  }
}
