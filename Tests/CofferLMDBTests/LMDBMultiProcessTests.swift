@_spi(Backend) import Coffer
import CofferChildProcess
import CofferTestSupport
import Foundation
import Testing

@testable import CofferLMDB

#if canImport(Glibc)
  import Glibc
#endif

/// A small C program on liblmdb that acts as another process using the store.
struct Helper {
  static let source = #"""
    #include <lmdb.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <unistd.h>

    static int fail(const char *what, int rc) { fprintf(stderr, "%s: %s\n", what, mdb_strerror(rc)); return 1; }

    static size_t unhex(const char *text, unsigned char *out) {
      size_t n = strlen(text) / 2;
      for (size_t i = 0; i < n; i++) sscanf(text + 2 * i, "%2hhx", &out[i]);
      return n;
    }

    int main(int argc, char **argv) {
      MDB_env *env; MDB_txn *txn; MDB_dbi dbi; int rc;
      if (argc < 3) return 2;
      mdb_env_create(&env);
      mdb_env_set_maxdbs(env, 512);
      if ((rc = mdb_env_open(env, argv[2], MDB_NOTLS, 0644))) return fail("open", rc);
      if (!strcmp(argv[1], "hold")) {
        if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn))) return fail("begin", rc);
        printf("ready\n"); fflush(stdout);
        sleep(60);
        return 0;
      }
      if (!strcmp(argv[1], "count") && argc == 4) {
        MDB_stat st;
        if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn))) return fail("begin", rc);
        if ((rc = mdb_dbi_open(txn, argv[3], 0, &dbi))) return fail("dbi", rc);
        mdb_stat(txn, dbi, &st);
        printf("%zu\n", st.ms_entries);
        return 0;
      }
      if (!strcmp(argv[1], "put") && argc == 6) {
        unsigned char key[512], data[4096];
        MDB_val k = { unhex(argv[4], key), key }, d = { unhex(argv[5], data), data };
        if ((rc = mdb_txn_begin(env, NULL, 0, &txn))) return fail("begin", rc);
        if ((rc = mdb_dbi_open(txn, argv[3], 0, &dbi))) return fail("dbi", rc);
        if ((rc = mdb_put(txn, dbi, &k, &d, 0))) return fail("put", rc);
        if ((rc = mdb_txn_commit(txn))) return fail("commit", rc);
        printf("done\n");
        return 0;
      }
      return 2;
    }
    """#

  let path: String

  /// Compiles the helper into `folder`; `nil` when no C compiler or liblmdb headers are there.
  static func build(in folder: TemporaryFolder) -> Helper? {
    let source = folder.file("helper.c")
    let binary = folder.file("helper")
    guard (try? Self.source.write(toFile: source, atomically: true, encoding: .utf8)) != nil else {
      return nil
    }
    for compiler in ["/usr/bin/cc", "/usr/bin/clang", "/usr/bin/gcc"]
    where FileManager.default.isExecutableFile(atPath: compiler) {
      if run(compiler, ["-o", binary, source, "-llmdb"])?.status == 0 { return Helper(path: binary) }
    }
    return nil
  }

  func callAsFunction(_ arguments: String...) -> String? {
    guard let result = run(path, arguments), result.status == 0 else { return nil }
    return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
  }
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// Several processes use one store at once, and readers left by killed processes are cleared.
@Suite struct LMDBMultiProcessTests {
  @Test func anotherProcessReadsAndWritesTheStoreWhileItIsOpen() async throws {
    let folder = try TemporaryFolder()
    guard let helper = Helper.build(in: folder) else { try Test.cancel("no C compiler with liblmdb here") }
    let schema = try EntitySchema(
      name: "Entry", fields: [Field("id", .int), Field("text", .string)], idField: "id")
    let store = try await openStore(folder.file("store"))
    #expect(store.backend.capabilities.contains(.multiProcess))
    try await store.prepare(schemas: [schema])
    try await store.apply(ChangeSet((1...10).map { .insert(entity: "Entry", row: Row([.int($0), "mine"])) }))

    #expect(helper("count", folder.file("store"), "rows:Entry") == "10")

    var row: [UInt8] = []
    RowCodec.encode([11, "theirs"], layout: 0, into: &row)
    let key = KeyEncoding.idKey(11)
    #expect(helper("put", folder.file("store"), "rows:Entry", hex(key), hex(row)) == "done")
    #expect(try await store.getRows(entity: "Entry", ids: [11]) == [Row([11, "theirs"])])
    #expect(try await store.countRows(Query(entity: "Entry")) == 11)
    try await store.close()
  }

  @Test func aReaderLeftByAKilledProcessIsClearedAtOpen() async throws {
    let folder = try TemporaryFolder()
    guard let helper = Helper.build(in: folder),
      let tool = ["/usr/bin/mdb_stat", "/usr/local/bin/mdb_stat"].first(
        where: FileManager.default.isExecutableFile(atPath:))
    else { try Test.cancel("needs a C compiler with liblmdb and mdb_stat") }
    let path = folder.file("store")
    let store = try await openStore(path)
    try await store.insert((1...3).map(sampleNote))
    try await store.close()

    // One reader stays alive so the lock file stays in use (the first process to open an
    // environment resets its reader table); the other is killed holding its read transaction.
    let keeper = try hold(helper, path)
    defer {
      keeper.kill(SIGKILL)
      _ = keeper.waitUntilExit()
    }
    let victim = try hold(helper, path)
    let pid = victim.id
    victim.kill(SIGKILL)
    _ = await victim.waitUntilExit()
    #expect(run(tool, ["-r", path])?.output.contains(" \(pid) ") == true, "the dead reader is in the table")

    let reopened = try await openStore(path)
    #expect(run(tool, ["-r", path])?.output.contains(" \(pid) ") == false, "the dead reader was cleared")
    try await reopened.insert(sampleNote(4))
    #expect(try await reopened.query(Note.self).count() == 4)
    try await reopened.close()
  }

  /// Starts a helper that opens a read transaction and waits; returns once it is open.
  func hold(_ helper: Helper, _ path: String) throws -> ChildProcess {
    let holder = try ChildProcess(helper.path, ["hold", path], standardOutput: .pipe)
    _ = try holder.standardOutput.read(until: "ready")
    return holder
  }
}

/// Two backends of one process on one directory share its environment.
@Suite struct LMDBSharedEnvironmentTests {
  @Test func twoStoresOnOneDirectoryShareDataAndCloseIndependently() async throws {
    let folder = try TemporaryFolder()
    let first = try await openStore(folder.path)
    let second = try await openStore(folder.path)
    try await first.insert(sampleNote(1))
    #expect(try await second.get(Note.self, id: 1) == sampleNote(1))
    try await first.close()
    try await second.insert(sampleNote(2))
    #expect(try await second.query(Note.self).count() == 2)
    await #expect(throws: CofferError.self) { try await first.query(Note.self).count() }
    try await second.close()
  }

  @Test func aDroppedBackendGivesItsEnvironmentBack() async throws {
    let folder = try TemporaryFolder()
    var backend: LMDBBackend? = try LMDBBackend(path: folder.path)
    weak let environment = backend?.environment
    #expect(environment != nil)
    backend = nil
    #expect(environment?.isClosed ?? true)
  }
}
