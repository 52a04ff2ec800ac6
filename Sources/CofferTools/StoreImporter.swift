@_spi(Backend) import Coffer
import Foundation

/// Reads an export (``Store/exportJSONLines(entities:progress:write:)``) into a store, a line at a time,
/// and proves it read everything the export wrote.
///
/// ```swift
/// var importer = StoreImporter(into: store)
/// for try await line in lines { try await importer.read(line) }
/// let report = try await importer.finish()
/// ```
///
/// - Each entity is prepared with the exact schema its header line carries. The store must
///   hold no rows of it, and if it stores the entity, with the same schema.
/// - Rows are inserted in atomic batches of ``batchSize``, so memory holds one batch however
///   large the export.
/// - ``finish()`` checks each entity's row count against its header and the digests against the
///   export's closing line; an export cut short (no closing line) or altered fails there.
/// - When anything fails, the importer deletes the rows it inserted — the entities were empty
///   before — so that a failed import never looks complete. (A process killed mid-import
///   leaves what it had inserted: ``Store/verify()`` and a digest show it.)
public struct StoreImporter: Sendable {
  /// The store written to.
  public let target: Store
  /// Rows per atomic insert.
  public var batchSize = 2_000
  /// Called as each entity starts, after each batch is inserted, and once the closing line is
  /// checked (then with ``RowProgress/totalRows`` set, which an import learns only there).
  public var progress: (@Sendable (RowProgress) -> Void)? {
    didSet { counter = RowProgressCounter(totalRows: nil, report: progress) }
  }

  private var lineNumber = 0
  private var opened = false
  private var ended = false
  private var current: Entity?
  private var digests: [EntityDigest] = []
  private var entitiesTouched: [EntitySchema] = []
  private var rowsRead = 0
  private var counter = RowProgressCounter(totalRows: nil, report: nil)

  /// The entity whose rows are being read.
  private struct Entity: Sendable {
    var schema: EntitySchema
    var expectedRows: Int
    var rows: [Row] = []
    var read = 0
    var digester: RowDigester
  }

  /// An importer into a store.
  public init(into target: Store) { self.target = target }

  /// Reads the next line of the export, or several: `text` holds one or more whole lines, with
  /// or without the line break after the last — a line as a file reader yields it, or a piece
  /// of text exactly as ``Store/exportJSONLines(entities:progress:write:)`` hands it to its closure.
  /// Blank lines are skipped. A line must not be split across two calls.
  ///
  /// - Throws: ``CofferError/Code/invalidInput`` naming the line for a line that is not of the
  ///   export format; ``CofferError/Code/notEmpty`` or ``CofferError/Code/schemaMismatch`` when
  ///   the store already holds an entity's rows or stores it with another schema; or the
  ///   store's error. After an error the importer has removed what it inserted and cannot go on.
  public mutating func read(_ text: some StringProtocol) async throws {
    guard text.utf8.contains(0x0A) else { return try await readOne(text) }
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
    if lines.last?.isEmpty == true { lines.removeLast() }
    for line in lines { try await readOne(line) }
  }

  private mutating func readOne(_ line: some StringProtocol) async throws {
    lineNumber += 1
    if line.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
    do {
      try await readLine(line)
    } catch {
      throw await failed(with: error)
    }
  }

  /// Ends the import: checks the last entity's row count and that the closing line's digests
  /// match what was read, and reports what was imported.
  ///
  /// - Throws: ``CofferError/Code/invalidInput`` when the export ended early or its digests do
  ///   not match (the rows inserted are then removed), or the store's error.
  public mutating func finish() async throws -> ImportReport {
    do {
      guard opened else { throw Self.failure("The input is empty: it holds no export.", line: nil) }
      guard ended else {
        throw Self.failure(
          "The export ends after line \(lineNumber) without its closing line: it was cut short. Nothing was "
            + "imported; export the store again.", line: nil)
      }
      return ImportReport(digest: StoreDigest(entities: digests), rows: rowsRead)
    } catch {
      throw await failed(with: error)
    }
  }

  private mutating func readLine(_ line: some StringProtocol) async throws {
    guard !ended else { throw failure("The export goes on after its closing line.") }
    var parser = JSONLineParser(line)
    let kind: String
    do {
      kind = try parser.lineKind()
    } catch let error as CofferError {
      throw failure(error.message)
    }
    if !opened {
      guard kind == "coffer" else {
        throw failure("The input does not begin with an export's opening line: it is not a Coffer export.")
      }
      let opening = try decode(Opening.self, line)
      guard opening.coffer == "export" else { throw failure("The input is not a Coffer export.") }
      guard opening.version <= JSONLines.version else {
        throw failure(
          "The export is of format version \(opening.version), newer than this Coffer reads (\(JSONLines.version)). "
            + "Import it with a newer Coffer.")
      }
      opened = true
      return
    }
    switch kind {
    case "row":
      guard var entity = current else { throw failure("A row comes before any entity's header line.") }
      current = nil
      let row: Row
      do {
        row = try parser.row(of: entity.schema)
      } catch let error as CofferError {
        throw failure(error.message)
      }
      entity.digester.add(row)
      entity.rows.append(row)
      entity.read += 1
      rowsRead += 1
      guard entity.read <= entity.expectedRows else {
        throw failure(
          "The entity \(entity.schema.name) has more rows than its header line says (\(entity.expectedRows))."
        )
      }
      if entity.rows.count >= batchSize { try await insert(&entity) }
      current = entity
    case "entity":
      try await endEntity()
      let header = try decode(Header.self, line)
      try await begin(header.entity)
      counter.start(header.entity.name, rows: header.rows)
      current = Entity(
        schema: header.entity, expectedRows: header.rows, digester: RowDigester(schema: header.entity))
    case "end":
      try await endEntity()
      let closing = try decode(Closing.self, line).end
      try check(closing)
      ended = true
      counter.end(totalRows: rowsRead)
    default:
      throw failure("A line of an unknown kind (`\(kind)`): the export is of another format.")
    }
  }

  /// Prepares an entity of the export on the target, which must hold none of its rows.
  private mutating func begin(_ schema: EntitySchema) async throws {
    guard !entitiesTouched.contains(where: { $0.name == schema.name }) else {
      throw failure("The entity \(schema.name) has a second header line.")
    }
    let stored = try await target.storedSchemas().first { $0.name == schema.name }
    if let stored {
      guard stored == schema else {
        throw CofferError(
          .schemaMismatch,
          "The store holds this entity with another schema than the export. Import into an empty store, or migrate "
            + "one of them first.", store: target.backend.name, entity: schema.name)
      }
    }
    // Prepared first: a store opened by this process knows an entity it stores only once it is
    // prepared, and counting it before would fail with `unknownEntity`.
    try await target.prepare(schemas: [schema])
    if stored != nil {
      let rows = try await target.rethrowing { try await target.backend.count(RowReader.all(of: schema)) }
      guard rows == 0 else {
        throw CofferError(
          .notEmpty,
          "The store already holds rows of this entity (\(rows)). Import into an empty store.",
          store: target.backend.name, entity: schema.name)
      }
    }
    entitiesTouched.append(schema)
  }

  /// Writes what is left of the current entity and checks its row count.
  private mutating func endEntity() async throws {
    guard var entity = current else { return }
    current = nil
    if !entity.rows.isEmpty { try await insert(&entity) }
    counter.endEntity()
    guard entity.read == entity.expectedRows else {
      throw failure(
        "The entity \(entity.schema.name) has \(entity.read) rows where its header line says \(entity.expectedRows): "
          + "the export was cut or altered.")
    }
    digests.append(entity.digester.digest)
  }

  private mutating func insert(_ entity: inout Entity) async throws {
    let rows = entity.rows
    entity.rows.removeAll(keepingCapacity: true)
    try await target.apply(
      ChangeSet(
        [.insertMany(entity: entity.schema.name, rows: RowSource(rows))],
        layouts: [entity.schema.name: entity.schema]),
      preconditionsChecked: false, enforcingReferences: false)
    target.telemetry?.countCopied(rows.count, entity: entity.schema.name)
    counter.add(rows.count)
  }

  /// Checks the closing line's digests against what was read.
  private func check(_ closing: Closing.End) throws {
    let read = Dictionary(digests.map { ($0.entity, $0) }, uniquingKeysWith: { first, _ in first })
    guard closing.entities.count == digests.count else {
      throw failure(
        "The closing line lists \(closing.entities.count) entities where the export holds \(digests.count).")
    }
    for entity in closing.entities {
      guard let digest = read[entity.name], digest.count == entity.rows, digest.rowsHash == entity.hash else {
        throw failure(
          "The closing line's digest of \(entity.name) does not match the rows read: the export was altered or damaged."
        )
      }
    }
  }

  /// Removes what this import inserted, then returns the error to throw.
  private mutating func failed(with error: any Error) async -> any Error {
    let touched = entitiesTouched
    entitiesTouched = []
    current = nil
    ended = true
    if !touched.isEmpty {
      let removal = ChangeSet(
        touched.map { .deleteMatching(entity: $0.name, filter: .all) },
        layouts: Dictionary(touched.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first }))
      _ = try? await target.apply(removal, preconditionsChecked: false, enforcingReferences: false)
    }
    return error
  }

  private func decode<T: Decodable>(_ type: T.Type, _ line: some StringProtocol) throws -> T {
    try Self.decode(type, line, number: lineNumber)
  }

  /// Decodes the JSON object of an opening, header or closing line, line `number` of the input.
  static func decode<T: Decodable>(_ type: T.Type, _ line: some StringProtocol, number: Int) throws -> T {
    do {
      return try JSONDecoder().decode(type, from: Data(line.utf8))
    } catch let error as CofferError {
      throw failure(error.message, line: number)
    } catch {
      throw failure("The line is not of the export format (malformed JSON, or a key missing).", line: number)
    }
  }

  private func failure(_ message: String) -> CofferError { Self.failure(message, line: lineNumber) }

  private static func failure(_ message: String, line: Int?) -> CofferError {
    CofferError(.invalidInput, line.map { "Line \($0): " + message } ?? message)
  }

  struct Opening: Decodable {
    var coffer: String
    var version: Int
  }

  struct Header: Decodable {
    var entity: EntitySchema
    var rows: Int
  }

  struct Closing: Decodable {
    struct End: Decodable {
      struct Entity: Decodable {
        var name: String
        var rows: Int
        var hash: String
      }
      var entities: [Entity]
    }
    var end: End
  }
}

/// What an import read: ``StoreImporter/finish()``.
public struct ImportReport: Sendable, Hashable {
  /// The digest of every entity imported, which matched the export's closing line.
  public var digest: StoreDigest
  /// The rows imported, over every entity.
  public var rows: Int
}

extension Store {
  /// Imports an export (see ``exportJSONLines(entities:progress:write:)``): ``StoreImporter`` over every
  /// element, then ``StoreImporter/finish()``.
  ///
  /// Each element holds one or more whole lines: the lines of a file (a line reader's
  /// elements), or the pieces of text `exportJSONLines` handed its closure, so that the two
  /// compose:
  ///
  /// ```swift
  /// var pieces: [String] = []
  /// try await source.exportJSONLines { pieces.append($0) }
  /// try await target.importJSONLines(AsyncStream { continuation in
  ///   for piece in pieces { continuation.yield(piece) }
  ///   continuation.finish()
  /// })
  /// ```
  ///
  /// - Parameter progress: Called as ``StoreImporter/progress`` is.
  @discardableResult
  public func importJSONLines<Lines: AsyncSequence>(
    _ lines: Lines, progress: (@Sendable (RowProgress) -> Void)? = nil
  ) async throws -> ImportReport
  where Lines.Element: StringProtocol {
    var importer = StoreImporter(into: self)
    importer.progress = progress
    for try await line in lines { try await importer.read(line) }
    return try await importer.finish()
  }
}
