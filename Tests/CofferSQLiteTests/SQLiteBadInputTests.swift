import Coffer
import CofferChildProcess
import CofferSQLite
import CofferTestSupport
import Foundation
import Testing

/// Files SQLite cannot use give a CofferError naming the path and what to do, and are never
/// replaced, changed or deleted.
@Suite struct SQLiteBadInputTests {
  @Test func aFileThatIsNotADatabaseIsACorruptStoreAndIsLeftUntouched() throws {
    let folder = try TemporaryFolder()
    let path = folder.file("notes.sqlite")
    let content = Data(String(repeating: "These are notes, not a database.\n", count: 200).utf8)
    try content.write(to: URL(fileURLWithPath: path))
    #expect {
      _ = try SQLiteBackend(path: path)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .corruptStore && error?.path == path
        && error?.message.contains("not a SQLite database") == true
    }
    #expect(FileManager.default.contents(atPath: path) == content)
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["notes.sqlite"])
  }

  @Test func anEmptiedDatabaseFileIsACorruptStoreAndIsLeftUntouched() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("emptied.sqlite")
    let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await store.insert((1...20).map(sampleMessage))
    try await store.close()
    try Data().write(to: URL(fileURLWithPath: path))
    #expect {
      _ = try SQLiteBackend(path: path)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .corruptStore && error?.path == path
        && error?.message.contains("empty (0 bytes)") == true
    }
    #expect(FileManager.default.contents(atPath: path) == Data())
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["emptied.sqlite"])
  }

  @Test func aNewDatabaseFileIsMadeWhereNoneExists() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("new.sqlite")
    let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await store.insert(sampleMessage(1))
    try await store.close()
    let reopened = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    #expect(try await reopened.query(Message.self).count() == 1)
    try await reopened.close()
  }

  @Test func aDamagedDatabaseIsACorruptStoreAndIsLeftUntouched() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("damaged.sqlite")
    let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await store.insert((1...200).map(sampleMessage))
    try await store.close()
    // Keep the 100-byte header, overwrite the rest of the first page (the schema) and beyond.
    var bytes = try #require(FileManager.default.contents(atPath: path))
    for offset in 100..<min(bytes.count, 12_000) { bytes[offset] = UInt8(truncatingIfNeeded: offset * 7) }
    try bytes.write(to: URL(fileURLWithPath: path))

    await #expect {
      let reopened = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
      _ = try await reopened.all(Message.self)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .corruptStore && error?.path == path && error?.message.contains("damaged") == true
    }
    #expect(FileManager.default.contents(atPath: path) == bytes)
  }

  @Test func aDatabaseLockedByAnotherProcessPastTheBusyTimeoutIsLocked() async throws {
    try #require(hasSQLiteTool, "the sqlite3 tool is missing; run make deps")
    let folder = try TemporaryFolder()
    let path = folder.file("busy.sqlite")
    let store = try await Store.open(url: "sqlite://\(path)?busyTimeout=200", registry: sqliteRegistry())
    try await store.insert(sampleMessage(1))

    let holder = try ChildProcess("sqlite3", [path], standardInput: .pipe, standardOutput: .pipe)
    try holder.standardInput.write(Array("BEGIN IMMEDIATE;\nSELECT 'holding';\n".utf8))
    _ = try await holder.standardOutput.read(until: "holding")

    await #expect {
      try await store.insert(sampleMessage(2))
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .locked && error?.path == path && error?.message.contains("busyTimeout") == true
    }
    #expect(try await store.query(Message.self).count() == 1, "reads go on while another process writes")

    try holder.standardInput.write(Array("ROLLBACK;\n.quit\n".utf8))
    holder.standardInput.close()
    _ = await holder.waitUntilExit()
    try await store.insert(sampleMessage(2))
    #expect(try await store.query(Message.self).count() == 2)
    try await store.close()
  }

  @Test func aReadOnlyFileIsAnIOErrorNamingThePathAndIsLeftUntouched() async throws {
    let folder = try TemporaryFolder()
    let mounted = try SmallFileSystem.mount(in: folder, size: "4m")
    defer { mounted?.unmount() }
    let directory = mounted?.path ?? folder.path
    let path = directory + "/store.sqlite"
    let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await store.insert(sampleMessage(1))
    try await store.close()
    let before = try #require(FileManager.default.contents(atPath: path))
    if let mounted {
      try #require(mounted.remountReadOnly(), "remounting the tmpfs read-only failed")
    } else {
      try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
    }

    #expect {
      _ = try SQLiteBackend(path: path)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .io && error?.path == path && error?.message.contains("write") == true
    }
    #expect(FileManager.default.contents(atPath: path) == before)
  }

  @Test func aReadOnlyDirectoryIsAnIOErrorNamingThePath() throws {
    let folder = try TemporaryFolder()
    let mounted = try SmallFileSystem.mount(in: folder, size: "1m")
    defer { mounted?.unmount() }
    let directory = mounted?.path ?? folder.file("ro")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    if let mounted {
      try #require(mounted.remountReadOnly(), "remounting the tmpfs read-only failed")
    } else {
      try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory)
    }
    let path = directory + "/new.sqlite"
    #expect {
      _ = try SQLiteBackend(path: path)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .io && error?.path == path
    }
    #expect(!FileManager.default.fileExists(atPath: path))
  }
}
