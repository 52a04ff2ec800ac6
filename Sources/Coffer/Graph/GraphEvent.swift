/// Something that happened to a record in a ``ModelGraph``, as delivered by
/// ``ModelGraph/events()`` and ``ModelGraph/events(for:id:field:)-(_,T.ID?,_)``.
///
/// ```swift
/// for await event in graph.events(for: Note.self) {
///   if case .updated(let key, let fields) = event, fields.contains("title") { refresh(key) }
/// }
/// ```
public enum GraphEvent: Sendable, Hashable, CustomStringConvertible {
  /// A value the graph did not hold (or held as deleted) was added.
  case inserted(ModelKey)
  /// A value changed; the set names every stored field whose value differs.
  case updated(ModelKey, fields: Set<String>)
  /// A value was deleted; the deletion is saved with the next save.
  case deleted(ModelKey)
  /// The record's change was written to the store (for a scratch graph: into its parent).
  case saved(ModelKey)
  /// A change to the record was rejected because its new value failed validation.
  case validationFailed(ModelKey, problems: [ValidationProblem])
  /// A batch committed elsewhere changed fields of the record that this graph has unsaved
  /// changes to, to other values; the graph kept its own (see ``ModelGraph/followStore()``). The
  /// set names those fields.
  case conflicted(ModelKey, fields: Set<String>)

  /// The record the event is about.
  public var key: ModelKey {
    switch self {
    case .inserted(let key), .updated(let key, _), .deleted(let key), .saved(let key),
      .validationFailed(let key, _), .conflicted(let key, _):
      key
    }
  }

  /// Whether the event concerns a field: an update of it, or an insert or delete (which set or
  /// clear every field), or a validation problem or a clash that names it.
  public func touches(field: String) -> Bool {
    switch self {
    case .inserted, .deleted: true
    case .updated(_, let fields), .conflicted(_, let fields): fields.contains(field)
    case .saved: false
    case .validationFailed(_, let problems): problems.contains { $0.field == field }
    }
  }

  /// `updated Note 7 [title]`, for logs and the demo.
  public var description: String {
    switch self {
    case .inserted(let key): "inserted \(key)"
    case .updated(let key, let fields): "updated \(key) [\(fields.sorted().joined(separator: ", "))]"
    case .deleted(let key): "deleted \(key)"
    case .saved(let key): "saved \(key)"
    case .validationFailed(let key, let problems):
      "validation failed \(key): \(problems.map(\.description).joined(separator: "; "))"
    case .conflicted(let key, let fields): "conflicted \(key) [\(fields.sorted().joined(separator: ", "))]"
    }
  }
}

/// How a change is made.
public struct ChangeOptions: Sendable, Hashable {
  /// Emit no events for the change (hooks, validation and undo still apply).
  public var silent: Bool

  /// Options; by default a change emits its events.
  public init(silent: Bool = false) { self.silent = silent }

  /// The default: events are emitted.
  public static let standard = ChangeOptions()
  /// A change that emits no events.
  public static let silent = ChangeOptions(silent: true)
}

/// When a root graph writes its changes to its store (for a scratch graph: into its parent).
///
/// ```swift
/// let graph = ModelGraph(store: store, autoSave: .everyChanges(100))
/// ```
public enum AutoSave: Sendable, Hashable {
  /// Only ``ModelGraph/save()`` writes.
  case manual
  /// Each change is saved before the call that made it returns.
  case immediate
  /// Changes are saved soon after, by a background task; ``ModelGraph/flush()`` waits for it.
  case background
  /// Changes are saved by the call that makes the `N`th change since the last save.
  case everyChanges(Int)
}
