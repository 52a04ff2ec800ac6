@_spi(Backend) import Coffer
import CofferSQL
import Foundation
import PostgresNIO

@_spi(Backend) extension PostgresBackend: StorageInspecting {
  /// The catalog's format version, the bytes the store's tables take on the server (each
  /// entity's table and the catalog, with their indexes and TOAST data:
  /// `pg_total_relation_size`), and the server's version, the database and the schema. Reads
  /// the server's catalogs and the store's catalog, no row.
  public func describeStorage() async throws -> StorageDescription {
    try checkOpen()
    do {
      return try await pool.withConnection(while: "describing the store") {
        [catalog, configuration] connection in
        var description = StorageDescription()
        let server = try await strings(
          "SELECT current_setting('server_version'), current_database()::text", [], on: connection)
        if let row = server.first, row.count == 2 {
          description.details.append(.init("server_version", row[0]))
          description.details.append(.init("database", row[1]))
        }
        description.details.append(.init("schema", configuration.schema))
        guard try await catalog.exists(on: connection) else {
          description.bytesOnDisk = 0
          return description
        }
        description.formatVersion = try await catalog.version(on: connection).map(String.init)
        let records = try await catalog.readableRecords(on: connection).records
        var tables: Set<String> = [
          PostgresCatalog.tableName, PostgresCatalog.formatTableName, PostgresMigrationLog.tableName,
        ]
        tables.formUnion(records.values.map(\.tableName))
        let sizes = try await strings(
          """
          SELECT c.relname::text, pg_total_relation_size(c.oid)::text
          FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')
          """, [configuration.schema], on: connection)
        var bytes: Int64 = 0
        for row in sizes where row.count == 2 && tables.contains(row[0]) { bytes += Int64(row[1]) ?? 0 }
        description.bytesOnDisk = bytes
        description.details.append(.init("entities", String(records.count)))
        return description
      }
    } catch let error as CofferError {
      throw error
    } catch {
      throw failure.error(error, while: "describing the store")
    }
  }

  /// Checks that the catalog agrees with the server's catalogs: each recorded entity's table
  /// exists with a column of the expected type (and `COLLATE "C"` for text) for every field, its
  /// id column is `NOT NULL` and the table's primary key, and each declared index exists over
  /// the expected columns, unique when declared so, and valid (`pg_index.indisvalid`: a
  /// `CREATE INDEX CONCURRENTLY` that failed leaves an invalid one, which enforces nothing).
  /// Indexes named like Coffer's that the schema does not declare are problems too.
  ///
  /// Reads only the server's catalogs and the store's catalog, on one pooled connection.
  public func checkStorage() async throws -> [IntegrityProblem] {
    try checkOpen()
    do {
      return try await pool.withConnection(while: "checking the store") { connection in
        guard try await catalog.exists(on: connection) else { return [] }
        var problems: [IntegrityProblem] = []
        if try await catalog.version(on: connection) == nil {
          problems.append(
            IntegrityProblem(
              "The coffer_format table records no format version; something other than Coffer emptied it."))
        }
        let read = try await catalog.readableRecords(on: connection)
        for entity in read.unreadable {
          problems.append(IntegrityProblem(entity: entity, catalog.unreadable(entity).message))
        }
        let tables = try await catalog.tableNames(on: connection)
        for record in read.records.values.sorted(by: {
          $0.schema.name.utf8.lexicographicallyPrecedes($1.schema.name.utf8)
        }) {
          guard tables.contains(record.tableName) else {
            problems.append(
              IntegrityProblem(
                entity: record.schema.name,
                "Its table '\(record.tableName)' is missing from schema '\(configuration.schema)': something other "
                  + "than Coffer dropped it. Restore it from a backup."))
            continue
          }
          problems += try await columnProblems(record, on: connection)
          problems += try await indexProblems(record, on: connection)
        }
        return problems
      }
    } catch let error as CofferError {
      throw error
    } catch {
      throw failure.error(error, while: "checking the store")
    }
  }

  /// The fields whose column is missing, of another type or collation than Coffer made it, and
  /// an id column that is nullable or not the primary key.
  private func columnProblems(_ record: PostgresCatalog.Record, on connection: PostgresConnection)
    async throws
    -> [IntegrityProblem]
  {
    let rows = try await strings(
      """
      SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull::text,
        coalesce((SELECT co.collname::text FROM pg_catalog.pg_collation co WHERE co.oid = a.attcollation), ''),
        (EXISTS (SELECT 1 FROM pg_catalog.pg_constraint k
          WHERE k.conrelid = c.oid AND k.contype = 'p' AND k.conkey = ARRAY[a.attnum]))::text
      FROM pg_catalog.pg_attribute a
      JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped
      """, [configuration.schema, record.tableName], on: connection)
    var columns: [String: [String]] = [:]
    for row in rows where row.count == 5 { columns[row[0]] = row }
    let schema = record.schema
    var problems: [IntegrityProblem] = []
    for (position, (field, column)) in zip(schema.fields, record.columns).enumerated() {
      func problem(_ message: String) {
        problems.append(IntegrityProblem(entity: schema.name, field: field.name, message))
      }
      guard let found = columns[column] else {
        problem(
          "Its column '\(column)' is missing from table '\(record.tableName)': something other than Coffer dropped "
            + "it. Restore it from a backup.")
        continue
      }
      let expected = PostgresValues.reportedType(field.kind)
      if found[1] != expected {
        problem(
          "Its column '\(column)' holds \(found[1]), but Coffer stores a \(field.kind) field as \(expected); "
            + "something other than Coffer changed it. Change the column back.")
      } else if expected == "text", found[3] != "C" {
        problem(
          "Its column '\(column)' has the collation '\(found[3])' instead of \"C\", so text sorts and compares "
            + "by another order than Coffer's. Change the column back to COLLATE \"C\".")
      }
      if position == schema.idPosition {
        if found[2] != "true" {
          problem("Its id column '\(column)' accepts nulls; something other than Coffer changed it.")
        }
        if found[4] != "true" {
          problem(
            "Its id column '\(column)' is not the primary key of table '\(record.tableName)', so ids may repeat and "
              + "lookups by id scan the table. Add the primary key back.")
        }
      }
    }
    return problems
  }

  /// The declared indexes that are missing, over other columns, of the other kind or invalid,
  /// and the indexes named like Coffer's that the schema does not declare.
  private func indexProblems(_ record: PostgresCatalog.Record, on connection: PostgresConnection) async throws
    -> [IntegrityProblem]
  {
    let rows = try await strings(
      """
      SELECT ic.relname::text, i.indisunique::text, i.indisvalid::text,
        coalesce(string_agg(a.attname::text, E'\\n' ORDER BY k.n), '')
      FROM pg_catalog.pg_index i
      JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
      JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
      JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
      CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
      LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
      WHERE n.nspname = $1 AND t.relname = $2
      GROUP BY ic.relname, i.indisunique, i.indisvalid
      """, [configuration.schema, record.tableName], on: connection)
    var existing: [String: (isUnique: Bool, isValid: Bool, columns: [String])] = [:]
    for row in rows where row.count == 4 {
      existing[row[0]] = (row[1] == "true", row[2] == "true", row[3].split(separator: "\n").map(String.init))
    }
    let schema = record.schema
    let table = PostgresTable(
      schema: schema, namespace: configuration.schema, tableName: record.tableName,
      columnNames: record.columns)
    var declared: Set<String> = []
    var problems: [IntegrityProblem] = []
    for index in schema.orderedIndexes {
      let name = indexName(table, index)
      declared.insert(name)
      let kind = index.isUnique ? "unique index" : "index"
      let fields = index.fields.joined(separator: ", ")
      func problem(_ message: String) {
        problems.append(IntegrityProblem(entity: schema.name, field: index.name, message))
      }
      guard let found = existing[name] else {
        problem(
          "Its \(kind) on \(fields) ('\(name)') is missing: something other than Coffer dropped it"
            + (index.isUnique ? ", so the values are no longer kept unique" : "")
            + ". Prepare the entity without the index and then with it, or create it again.")
        continue
      }
      let columns = index.fields.compactMap { schema.position(of: $0) }.map { record.columns[$0] }
      if found.columns != columns || found.isUnique != index.isUnique {
        problem(
          "Its \(kind) '\(name)' was changed by something other than Coffer: it is "
            + "\(found.isUnique ? "a unique" : "a non-unique") index on \(found.columns.joined(separator: ", ")). "
            + "Drop it and prepare the entity again.")
      }
      if !found.isValid {
        problem(
          "Its \(kind) '\(name)' is invalid (pg_index.indisvalid is false: a CREATE INDEX CONCURRENTLY or REINDEX "
            + "failed), so PostgreSQL does not use it\(index.isUnique ? " and values are not kept unique" : ""). "
            + "Rebuild it: REINDEX INDEX.")
      }
    }
    let prefix = indexPrefix(record.tableName)
    for name in existing.keys.sorted() where name.hasPrefix(prefix) && !declared.contains(name) {
      problems.append(
        IntegrityProblem(
          entity: schema.name,
          "Table '\(record.tableName)' has an index '\(name)' that the stored schema does not declare; something "
            + "other than Coffer made it. Drop it."))
    }
    return problems
  }

  /// Runs a query whose columns are all text and returns its rows, `""` for a null.
  private func strings(_ sql: String, _ parameters: [String], on connection: PostgresConnection) async throws
    -> [[String]]
  {
    var binds = PostgresBindings()
    for parameter in parameters { binds.append(.string(parameter), as: .string) }
    var rows: [[String]] = []
    for row in try await connection.send(PostgresQuery(unsafeSQL: sql, binds: binds)).collect() {
      rows.append(try row.map { cell in try PostgresValues.read(cell.bytes, as: .string).stringValue ?? "" })
    }
    return rows
  }
}

extension Value {
  /// The string this value holds, if it is one.
  fileprivate var stringValue: String? {
    if case .string(let text) = self { return text }
    return nil
  }
}
