/// The one error type Coffer throws.
///
/// Match on ``code`` to decide what to do, and show ``description`` to a person: it says what
/// happened, where (store, entity, id, field, path) and what to do about it.
///
/// ```swift
/// do {
///   try await store.insert(message)
/// } catch CofferError.Code.duplicateID {
///   try await store.update(message)
/// }
/// ```
///
/// Besides ``code`` and ``message``, an error carries the context it knows, each `nil` when it
/// does not apply: ``store``, ``entity``, ``id`` (for people) and ``idValue`` (for code),
/// ``field``, ``path`` and the ``underlying`` error. To tell which record of a batch failed,
/// compare ``idValue`` with your ids' stored form:
///
/// ```swift
/// do {
///   try await store.insert(messages)
/// } catch let error as CofferError where error.code == .duplicateID {
///   let clash = messages.first { $0.id.storedValue == error.idValue }
/// }
/// ```
///
/// Stored field values never appear in messages (they may be secrets); ids do, because a
/// person needs them to find the record.
public struct CofferError: Error, Sendable, CustomStringConvertible {
  /// What kind of failure this is. Codes are stable; new ones may be added.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    /// The code's stable name, e.g. `"duplicateID"`.
    public let name: String
    private init(_ name: String) { self.name = name }

    /// An insert found a row with the same id already stored (or earlier in the same batch).
    public static let duplicateID = Code("duplicateID")
    /// An update named an id that is not stored.
    public static let notFound = Code("notFound")
    /// A change would give two rows equal values in a unique index.
    public static let uniqueViolation = Code("uniqueViolation")
    /// A change would break an ``EntityReference``: a row refers to an id its referenced entity
    /// does not store, or a deleted row is still referred to under ``DeleteRule/deny``. The
    /// message names the entity, id and field; nothing was applied.
    public static let referenceViolation = Code("referenceViolation")
    /// A value cannot be stored: NaN, the wrong kind for its field, or null in a required field.
    public static let invalidValue = Code("invalidValue")
    /// An integer does not fit in the range stored (Int64), or a stored one does not fit the
    /// Swift type it is read into.
    public static let valueOutOfRange = Code("valueOutOfRange")
    /// A schema is not well formed (no id, duplicate fields, unknown index field, …), or a type's
    /// schema cannot be derived from its `Codable` conformance.
    public static let invalidSchema = Code("invalidSchema")
    /// The schema stored does not match the one the code declares (a field changed type, a new
    /// required field has no default).
    public static let schemaMismatch = Code("schemaMismatch")
    /// A query names an unknown field, compares a field with a value of another kind, or uses an
    /// operation the field's kind does not support.
    public static let invalidQuery = Code("invalidQuery")
    /// The entity was never prepared in this store.
    public static let unknownEntity = Code("unknownEntity")
    /// A store URL is malformed.
    public static let invalidURL = Code("invalidURL")
    /// A store URL names a scheme no registered backend handles.
    public static let unknownScheme = Code("unknownScheme")
    /// A stored row could not be turned back into its Swift type.
    public static let decodingFailed = Code("decodingFailed")
    /// A store's files are damaged, truncated, of the wrong kind or of a newer format.
    public static let corruptStore = Code("corruptStore")
    /// The disk, map or quota is full.
    public static let storageFull = Code("storageFull")
    /// Another process or connection holds a lock the operation needs.
    public static let locked = Code("locked")
    /// An operating-system input/output call failed.
    public static let io = Code("io")
    /// The store was closed.
    public static let closed = Code("closed")
    /// The backend does not support the operation (see its capabilities).
    public static let unsupported = Code("unsupported")
    /// A will-change hook of a model graph refused a change; the graph kept the old value.
    public static let changeVetoed = Code("changeVetoed")
    /// A configuration setting is missing or not valid.
    public static let invalidConfiguration = Code("invalidConfiguration")
    /// The store's server could not be reached, refused the connection, or dropped it: it is
    /// not running, not listening there, a standby that takes no writes, or out of connections.
    /// Retrying later may succeed; nothing of a failed batch was applied.
    public static let unavailable = Code("unavailable")
    /// The store's server refused the credentials (a wrong password or an unknown role) or the
    /// role lacks a privilege the operation needs.
    public static let accessDenied = Code("accessDenied")
    /// An operation ran longer than the store's time limit (a server's statement timeout) and
    /// was cancelled; nothing of a batch that timed out was applied.
    public static let timedOut = Code("timedOut")
    /// A batch was sent to the store's server and no answer came back (the connection dropped,
    /// the server stopped) for as long as the backend kept sending it again: it may or may not
    /// have been applied. Read what it changes to find out before sending it again.
    public static let outcomeUnknown = Code("outcomeUnknown")
    /// A batch's precondition no longer held: a row it depends on was changed, added or removed
    /// by another writer since it was read. Nothing was applied; read again and retry
    /// (``Store/transaction(retries:_:)`` and ``Store/modify(_:id:retries:_:)`` do).
    public static let conflict = Code("conflict")
    /// A store that must be empty for the operation holds rows: the target of a copy or an
    /// import. Choose an empty store, or resume an interrupted copy.
    public static let notEmpty = Code("notEmpty")
    /// Input given to a tool is malformed, cut short or altered: an export being imported. The
    /// message names the line; nothing was kept of what was read.
    public static let invalidInput = Code("invalidInput")
    /// A migration step failed: its conversion threw, a row could not take the new schema, or
    /// a new unique index does not hold for the stored rows. The message names the step, and
    /// the entity, id and field where it can; the step applied nothing and no later step ran.
    public static let migrationFailed = Code("migrationFailed")
    /// The store records a migration step the app's plan does not have — a newer version of
    /// the app migrated it — or steps in another order. The store was left untouched; open it
    /// with the app version that wrote it, or one newer.
    public static let unknownMigration = Code("unknownMigration")
    /// A change feed was read after a position whose next batches were trimmed (see
    /// ``Store/trimChanges(before:)`` and ``ChangeRetention``): what came after it can no longer
    /// be told. Copy the whole store again and follow the feed from a position read just before
    /// the copy.
    public static let changesTrimmed = Code("changesTrimmed")
    /// The backend failed in a way not covered above; ``CofferError/underlying`` says more.
    public static let backendFailure = Code("backendFailure")

    /// The code's name.
    public var description: String { name }
  }

  /// What kind of failure this is.
  public var code: Code
  /// What happened and what to do, in a sentence or two.
  public var message: String
  /// The store, as its URL or a short name, when known.
  public var store: String?
  /// The entity concerned, when there is one.
  public var entity: String?
  /// The id of the record concerned, rendered as text for people, when there is one.
  ///
  /// Compare ``idValue`` instead in code: this rendering quotes strings and shortens long ones.
  public var id: String?
  /// The id of the record concerned as it is stored, to compare with the id a program used
  /// (`error.idValue == message.id.storedValue`), when the error knows it.
  public var idValue: Value?
  /// The field concerned, when there is one.
  public var field: String?
  /// The file or directory concerned, when there is one.
  public var path: String?
  /// The error that caused this one, when there is one.
  public var underlying: (any Error & Sendable)?

  /// Makes an error. Prefer a message that tells a person what to do next.
  public init(
    _ code: Code, _ message: String, store: String? = nil, entity: String? = nil, id: String? = nil,
    field: String? = nil, path: String? = nil, underlying: (any Error & Sendable)? = nil
  ) {
    self.code = code
    self.message = message
    self.store = store
    self.entity = entity
    self.id = id
    self.field = field
    self.path = path
    self.underlying = underlying
  }

  /// Makes an error about the record with a stored id, keeping both its rendering (``id``)
  /// and the value (``idValue``).
  @_spi(Backend) public init(
    _ code: Code, _ message: String, store: String? = nil, entity: String? = nil, id: Value,
    field: String? = nil, path: String? = nil, underlying: (any Error & Sendable)? = nil
  ) {
    self.init(
      code, message, store: store, entity: entity, id: id.description, field: field, path: path,
      underlying: underlying)
    self.idValue = id
  }

  /// The message followed by the context that is set, e.g.
  /// `duplicateID: … [store: memory:, entity: Message, id: 42]`.
  public var description: String {
    var context: [String] = []
    if let store { context.append("store: \(store)") }
    if let entity { context.append("entity: \(entity)") }
    if let id { context.append("id: \(id)") }
    if let field { context.append("field: \(field)") }
    if let path { context.append("path: \(path)") }
    var text = "\(code.name): \(message)"
    if !context.isEmpty { text += " [\(context.joined(separator: ", "))]" }
    if let underlying { text += " (cause: \(underlying))" }
    return text
  }

  /// This error with the store filled in where it was not set.
  public func inStore(_ name: String) -> CofferError {
    var copy = self
    if copy.store == nil { copy.store = name }
    return copy
  }
}

extension CofferError.Code {
  /// Matches an error whose ``CofferError/code`` is this code, so that `catch` clauses can
  /// name a code: `catch CofferError.Code.notFound { … }`.
  public static func ~= (code: CofferError.Code, error: any Error) -> Bool {
    (error as? CofferError)?.code == code
  }
}
