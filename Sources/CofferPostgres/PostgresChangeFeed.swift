@_spi(Backend) import Coffer
import CofferSQL
import Foundation
import PostgresNIO

/// The change feed of a PostgreSQL store: its tables and statements, and its state in one
/// handle (see <doc:RecordingChanges> and `Docs/PostgreSQL.md`).
///
/// The feed lives in two tables of the store's schema: `coffer_changes`, one row per batch
/// (number, commit time, payload), and `coffer_change_feed`, one row with the number up to
/// which it was trimmed. The feed is on exactly when `coffer_changes` exists.
///
/// **Numbers in commit order.** A batch takes its number in the last statement before `COMMIT`,
/// after taking a transaction-level advisory lock of the store's feed: the lock is held until the
/// batch commits (and is visible), so the next batch takes its number only after that, and
/// numbers grow in commit order. A reader that has seen batch `n` can never later find a batch
/// numbered below `n`. A number taken by a batch that then fails is never used (a gap, which
/// readers do not notice). The lock is an advisory lock, not a counter row, so that a
/// serializable batch does not fail for a concurrent update of the counter.
///
/// **Every writer records.** Turning the feed on puts a statement-level trigger on every entity
/// table that refuses a write unless the session says it records the feed (the setting
/// `coffer.recording`); a handle that has not heard the feed is on gets that refusal at its
/// first write, learns, and runs the batch again, recording it. A store without the feed has
/// no trigger, and its batches send no statement more than before.
final class PostgresChangeFeed: Sendable {
  static let changesTableName = "coffer_changes"
  static let boundsTableName = "coffer_change_feed"
  static let guardName = "coffer_feed_guard"
  /// The SQLSTATE of the guard's refusal.
  static let refusedState = "CF001"
  /// The first key of the feed's advisory lock (the second is the schema's hash).
  static let lockClass: Int32 = 0x436F_6666
  /// How long a follower waits for a notification before it looks at the feed anyway: the bound
  /// when a notification is lost (the listening connection was lost and is opening again).
  static let poll = Duration.milliseconds(250)

  let schema: String
  let changesTable: String
  let boundsTable: String
  /// The `LISTEN` channel the store's commits notify.
  let channel: String
  /// Once on, a feed stays on: a `true` here is never wrong.
  let knownOn = LockedState(false)
  let retention = LockedState(ChangeRetention.all)
  let signal = ChangeSignal()
  /// The pool connections (by id) on which `coffer.recording` is set.
  let marked = LockedState<Set<Int>>([])
  /// The task that listens for other processes' commits, once a follower waited.
  let listener = LockedState<Task<Void, Never>?>(nil)

  init(schema: String) {
    self.schema = schema
    let namespace = SQLIdentifier.quoted(schema)
    changesTable = namespace + "." + SQLIdentifier.quoted(Self.changesTableName)
    boundsTable = namespace + "." + SQLIdentifier.quoted(Self.boundsTableName)
    // Channel names are identifiers, of at most 63 bytes: a hash keeps every schema's apart.
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in schema.utf8 {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01b3
    }
    channel = "coffer_changes_" + String(hash, radix: 36)
  }

  /// Whether the server compresses with LZ4: a query answering one Boolean.
  static let hasLZ4SQL =
    "SELECT coalesce(bool_or('lz4' = ANY(enumvals)), false) FROM pg_settings WHERE name = 'default_toast_compression'"

  /// The statements that create the feed's tables and guard function, when missing.
  ///
  /// A bulk batch's payload is hundreds of kilobytes: PostgreSQL's default compression (pglz)
  /// took 10–15 ms for 500 KB, a third of what recording a 10,000-row insert added. LZ4 takes
  /// a few; without it the payload is stored uncompressed (`STORAGE EXTERNAL`).
  func createStatements(lz4: Bool) -> [String] {
    [
      """
      CREATE TABLE IF NOT EXISTS \(changesTable) (
        "sequence" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        "committed_at" bigint NOT NULL,
        "payload" bytea \(lz4 ? "COMPRESSION lz4 " : "")NOT NULL)
      """,
      "ALTER TABLE \(changesTable) ALTER COLUMN \"payload\" SET STORAGE " + (lz4 ? "EXTENDED" : "EXTERNAL"),
      """
      CREATE TABLE IF NOT EXISTS \(boundsTable) (
        "id" integer PRIMARY KEY CHECK ("id" = 1), "trimmed_through" bigint NOT NULL)
      """,
      "INSERT INTO \(boundsTable) VALUES (1, 0) ON CONFLICT DO NOTHING",
      """
      CREATE OR REPLACE FUNCTION \(guardFunction)() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('coffer.recording', true) IS DISTINCT FROM 'on' THEN
          RAISE EXCEPTION 'This Coffer store records a change feed; the writer must record it.'
            USING ERRCODE = '\(Self.refusedState)';
        END IF;
        RETURN NULL;
      END $$
      """,
    ]
  }

  var guardFunction: String { SQLIdentifier.quoted(schema) + "." + SQLIdentifier.quoted(Self.guardName) }

  /// The statements that put the guard on an entity's table (`table` quoted), replacing one
  /// already there.
  func guardStatements(on table: String) -> [String] {
    let trigger = SQLIdentifier.quoted(Self.guardName)
    return [
      "DROP TRIGGER IF EXISTS \(trigger) ON \(table)",
      "CREATE TRIGGER \(trigger) BEFORE INSERT OR UPDATE OR DELETE ON \(table) "
        + "FOR EACH STATEMENT EXECUTE FUNCTION \(guardFunction)()",
    ]
  }

  /// Whether `coffer_changes` exists: the `to_regclass` query and its binding.
  var existsQuery: PostgresQuery {
    var binds = PostgresBindings(capacity: 1)
    binds.append(.string(changesTable), as: .string)
    return PostgresQuery(unsafeSQL: "SELECT to_regclass($1) IS NOT NULL", binds: binds)
  }

  /// Records a batch, as the last statement of its transaction: waits for the feed's lock (held
  /// by the batch before until it commits), takes the next number and stores the payload,
  /// notifying listeners when the batch commits. Binds the payload, the schema and the channel;
  /// answers the number and the commit time.
  var recordSQL: String {
    "WITH \"turn\" AS MATERIALIZED (SELECT pg_advisory_xact_lock(\(Self.lockClass), hashtext($2)), "
      + "pg_notify($3, '')) "
      + "INSERT INTO \(changesTable) (\"committed_at\", \"payload\") "
      + "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, $1 FROM \"turn\" "
      + "RETURNING \"sequence\", \"committed_at\""
  }

  /// A statement that writes one row by id (`write`, answering a row when it wrote one) and
  /// records the batch in the same statement, after the write and only when it wrote: its
  /// parameters go on from `$parameters` with the payload, the schema and the channel.
  func recordingSQL(_ write: String, parameters first: Int) -> String {
    "WITH \"row\" AS (\(write)), \"turn\" AS MATERIALIZED (SELECT pg_advisory_xact_lock(\(Self.lockClass), "
      + "hashtext($\(first + 1))), pg_notify($\(first + 2), '') FROM \"row\" LIMIT 1) "
      + "INSERT INTO \(changesTable) (\"committed_at\", \"payload\") "
      + "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, $\(first) FROM \"turn\" "
      + "RETURNING \"sequence\", \"committed_at\""
  }

  /// The number and commit time a record statement answered; `nil` when it recorded nothing.
  func numbers(_ rows: [PostgresRow]) throws -> (sequence: UInt64, micros: Int64)? {
    guard let row = rows.first else { return nil }
    var cells = row.makeIterator()
    guard let first = cells.next(), let second = cells.next(),
      case .int(let sequence) = try PostgresValues.read(first.bytes, as: .int),
      case .int(let micros) = try PostgresValues.read(second.bytes, as: .int)
    else { return nil }
    return (UInt64(max(0, sequence)), micros)
  }

  /// The bounds: the trimmed number and the last number, in one snapshot.
  var boundsSQL: String {
    "SELECT \"trimmed_through\", greatest(\"trimmed_through\", "
      + "(SELECT max(\"sequence\") FROM \(changesTable))) FROM \(boundsTable) WHERE \"id\" = 1"
  }

  /// The trimmed number and the batches after `$1`, at most `$2`, in one snapshot (one row with
  /// nulls when there is none).
  var readSQL: String {
    "SELECT f.\"trimmed_through\", c.\"sequence\", c.\"committed_at\", c.\"payload\" FROM \(boundsTable) f "
      + "LEFT JOIN LATERAL (SELECT \"sequence\", \"committed_at\", \"payload\" FROM \(changesTable) "
      + "WHERE \"sequence\" > $1 ORDER BY \"sequence\" LIMIT $2) c ON true WHERE f.\"id\" = 1 "
      + "ORDER BY c.\"sequence\""
  }

  /// Removes the batches numbered up to `$1` (at most the last one) and raises the trimmed
  /// number, in one statement.
  var trimThroughSQL: String {
    "WITH \"bound\" AS (SELECT least($1::bigint, (SELECT max(\"sequence\") FROM \(changesTable))) AS \"n\"), "
      + "\"gone\" AS (DELETE FROM \(changesTable) WHERE \"sequence\" <= (SELECT \"n\" FROM \"bound\")) "
      + "UPDATE \(boundsTable) SET \"trimmed_through\" = greatest(\"trimmed_through\", \"bound\".\"n\") "
      + "FROM \"bound\" WHERE \"id\" = 1 AND \"bound\".\"n\" IS NOT NULL"
  }

  /// Removes the batches committed before `$1` microseconds, in one statement.
  var trimBeforeSQL: String {
    "WITH \"bound\" AS (SELECT max(\"sequence\") AS \"n\" FROM \(changesTable) WHERE \"committed_at\" < $1), "
      + "\"gone\" AS (DELETE FROM \(changesTable) WHERE \"sequence\" <= (SELECT \"n\" FROM \"bound\")) "
      + "UPDATE \(boundsTable) SET \"trimmed_through\" = greatest(\"trimmed_through\", \"bound\".\"n\") "
      + "FROM \"bound\" WHERE \"id\" = 1 AND \"bound\".\"n\" IS NOT NULL"
  }

  /// The statement and bindings of a trim.
  func trimQuery(_ trim: ChangeTrim) -> (String, PostgresBindings) {
    var binds = PostgresBindings(capacity: 1)
    switch trim {
    case .through(let sequence):
      binds.append(.int(Int64(clamping: sequence)), as: .int)
      return (trimThroughSQL, binds)
    case .committedBefore(let micros):
      binds.append(.int(micros), as: .int)
      return (trimBeforeSQL, binds)
    }
  }

  /// Sets `coffer.recording` on a connection for the rest of its session, once.
  func mark(_ connection: PostgresConnection) async throws {
    if marked.withLock({ $0.contains(connection.id) }) { return }
    _ = try await connection.send(
      PostgresQuery(unsafeSQL: "SELECT set_config('coffer.recording', 'on', false)"), logger: .disabled
    ).collect()
    marked.withLock { _ = $0.insert(connection.id) }
  }

  /// Records a batch's changes on its connection, inside its transaction; returns the number
  /// and commit time given, or `nil` when the batch changed nothing.
  func record(_ collector: ChangeCollector, on connection: PostgresConnection) async throws
    -> (sequence: UInt64, micros: Int64)?
  {
    guard let payload = collector.encoded() else { return nil }
    var binds = PostgresBindings(capacity: 3)
    binds.append(.bytes(Data(payload)), as: .bytes)
    binds.append(.string(schema), as: .string)
    binds.append(.string(channel), as: .string)
    let rows = try await PostgresStatements.rows(recordSQL, binds, on: connection, logger: .disabled)
    guard let row = rows.first else { return nil }
    var cells = row.makeIterator()
    guard let first = cells.next(), let second = cells.next(),
      case .int(let sequence) = try PostgresValues.read(first.bytes, as: .int),
      case .int(let micros) = try PostgresValues.read(second.bytes, as: .int)
    else { return nil }
    return (UInt64(max(0, sequence)), micros)
  }
}
