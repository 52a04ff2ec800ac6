import AsyncHTTPClient
@_spi(Backend) import Coffer
import CofferWire
import Foundation
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A store served by `coffer serve` (or an app's `CofferServer`) on another machine, reached over
/// HTTP: the backend for `coffer+http://` and `coffer+https://` URLs.
///
/// Every call of the backend interface is one request to the server's JSON API (see the Formats
/// article), which runs it on the store it serves; so a store opened by this URL behaves as the
/// served store does, and passes the same conformance suite. An app on a device uses its models
/// exactly as it would locally, with only the URL changed:
///
/// ```swift
/// // COFFER_TOKEN holds a bearer token the server knows.
/// let store = try await Store.open(url: "coffer+https://data.example.com/chat")
/// ```
///
/// A batch is sent with an idempotency key. When its answer is lost (the connection dropped, the
/// server was restarted or killed), the backend sends it again with the same key for up to
/// ``Configuration/retryFor``, and the server applies it at most once. If the server cannot be
/// reached for that long, the error says whether the batch was surely not applied
/// (``Coffer/CofferError/Code/unavailable``) or whether that cannot be told
/// (``Coffer/CofferError/Code/outcomeUnknown``). An error the server reports — a duplicate id, a
/// failed precondition — arrives as the same ``Coffer/CofferError`` case it was on the server.
///
/// Transactions work as they do locally: ``Coffer/Store/transaction(retries:_:)`` sends its
/// writes as one batch with preconditions, which the server checks inside the store's write
/// transaction. Observation and ``Coffer/Store/changes(after:follow:)`` read the server's change
/// feed.
public final class RemoteBackend: Sendable {
  /// `coffer+http://HOST:PORT/PREFIX`, never with the token.
  public let name: String
  /// The served store's capabilities, as the server reports them when the backend opens, and
  /// ``Coffer/BackendCapabilities/multiProcess``: any number of processes share a served store.
  @_spi(Backend) public let capabilities: BackendCapabilities
  /// How the backend was opened (its token included: do not print it; its description does not
  /// show it).
  public let configuration: Configuration

  let transport: RemoteTransport
  let logger: Logger
  /// Whether the served store can say when it was committed to (`commitMarker`).
  let servesCommitMarker: Bool
  private let closed = LockedState(false)
  /// The digests that name each entity's layout in reads, and those the server refused.
  let layoutDigests = WireLayoutDigest.Cache()

  /// Asks the server what the store can do, to report a wrong address, a refused token or a
  /// missing store now rather than at the first query.
  ///
  /// - Throws: ``Coffer/CofferError/Code/unavailable`` when nothing answers at the address
  ///   within ``Configuration/retryFor``; ``Coffer/CofferError/Code/accessDenied`` for a token
  ///   the server refuses; what the server reports otherwise.
  public init(configuration: Configuration, logger: Logger? = nil) async throws {
    let name = configuration.storeName
    self.name = name
    self.configuration = configuration
    self.logger = (logger ?? .disabled).forStore(name)
    let transport = RemoteTransport(configuration: configuration, store: name)
    self.transport = transport
    do {
      let info: WireStoreInfo = try await Self.call(
        transport, .GET, "/v1/store", body: nil, retrying: true, name: name, as: WireStoreInfo.self)
      var capabilities = BackendCapabilities()
      for entry in info.capabilities {
        if let known = Self.capabilityNames[entry] { capabilities.insert(known) }
      }
      capabilities.insert(.multiProcess)
      let marker = info.abilities.contains("commitMarker")
      if marker { capabilities.insert(.observesOtherHandles) }
      self.capabilities = capabilities
      self.servesCommitMarker = marker
    } catch {
      await transport.shutdown()
      throw error
    }
    self.logger.debug(
      "Opened the remote store",
      metadata: ["coffer.capabilities": .string(capabilities.names.joined(separator: ","))])
  }

  static let capabilityNames: [String: BackendCapabilities] = [
    "reopenable": .reopenable, "durable": .durable, "multiProcess": .multiProcess,
    "crossEntityTransactions": .crossEntityTransactions, "schemaEvolution": .schemaEvolution,
    "preconditions": .preconditions, "observesOtherHandles": .observesOtherHandles,
  ]

  /// Prepares entities on the server, which evolves stored ones as the served store does, and
  /// lists every entity.
  @discardableResult
  public func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema] {
    let answer = try await call(.POST, "/v1/prepare", WirePrepare(schemas: schemas), as: WireSchemas.self)
    return answer.schemas
  }

  /// Reads a query's rows from the server and hands each over.
  @_spi(Backend) public func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    let answer = try await readRows(query)
    guard let first = answer.rows.first else { return }
    let fields = RowFields(Row(first))
    for values in answer.rows {
      fields.current = Row(values)
      try visit(fields)
    }
  }

  /// Counts a query's rows on the server.
  @_spi(Backend) public func count(_ query: Query) async throws -> Int {
    // The server counts in the entity's schema: a count carries no layout.
    var wire = WireQuery(query)
    wire.layout = nil
    return try await send(wire, to: "/v1/count", as: WireCount.self).count
  }

  /// Sends a batch with an idempotency key, again with the same key when its answer is lost,
  /// and returns what the server applied.
  ///
  /// - Throws: the server's error for a batch it refused (nothing applied);
  ///   ``Coffer/CofferError/Code/unavailable`` when the server could not be reached and the batch
  ///   surely was not applied; ``Coffer/CofferError/Code/outcomeUnknown`` when it may have been.
  @discardableResult
  @_spi(Backend) public func apply(_ changes: ChangeSet) async throws -> ChangeSummary {
    try checkOpen()
    if changes.isEmpty { return ChangeSummary() }
    let made = try Self.make(changes)
    do {
      return try await sendBatch(made.changes).summary
    } catch let error as CofferError {
      // The batch was cut where a row source failed, and ended with an update of an absent id:
      // failing there means every row before it was accepted, so the source's error is the batch's.
      if let failure = made.sourceFailure, error.code == .notFound, error.idValue == failure.sentinel {
        throw failure.error
      }
      throw error
    }
  }

  /// Closes the connections. Later calls fail with ``Coffer/CofferError/Code/closed``; the
  /// served store stays open on the server.
  public func close() async throws {
    let wasClosed = closed.withLock { closed in
      defer { closed = true }
      return closed
    }
    if !wasClosed { await transport.shutdown() }
  }

  func checkOpen() throws {
    if closed.withLock({ $0 }) {
      throw CofferError(.closed, "The store was closed; open it again to use it.", store: name)
    }
  }
}

@_spi(Backend) extension RemoteBackend: StorageBackend {}
