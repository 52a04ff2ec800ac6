/// One value a graph holds: its row, and the decoded value it stands for when known.
struct GraphValue: Sendable {
  var row: Row
  /// The typed value (a ``Storable`` or a ``DynamicRecord``), decoded from ``row``; `nil` until
  /// a typed read decodes it (after a snapshot is loaded).
  var value: (any Sendable)?
}

/// The graph's record of one (entity, id).
struct GraphEntry: Sendable {
  /// What the graph's source (its store, or the parent of a scratch graph) holds, as far as the
  /// graph knows; `nil` when the source has no such record.
  var stored: Row?
  /// The canonical value; `nil` when the record is deleted (or was never there).
  var current: GraphValue?
  /// Bumped by every change, so an optimistic change can tell that it raced another.
  var revision: UInt64 = 0
  /// The graph clock at the last change: saves replay changes in the order they were made.
  var order: UInt64 = 0

  /// Whether the source differs from the canonical value.
  var isDirty: Bool { stored != current?.row }
}

/// One record's change in an undo group.
struct UndoStep: Sendable {
  var key: ModelKey
  var before: GraphValue?
  var after: GraphValue?
  var adapter: EntityAdapter
}

/// The changes one operation made, undone and redone together.
struct UndoGroup: Sendable {
  var number: UInt64
  var steps: [UndoStep]
}

/// A change as hooks see it before they are typed.
struct ErasedChange: Sendable {
  var key: ModelKey
  var old: GraphValue?
  var new: GraphValue?
  var fields: Set<String>
}

/// A registered hook, typed by the closure it wraps.
struct ErasedHook: Sendable {
  var number: UInt64
  var will: (@Sendable (ErasedChange) -> ChangeDecision)?
  var did: (@Sendable (ErasedChange) -> Void)?
}

/// An event stream's filter and continuation.
struct EventSubscriber: Sendable {
  var continuation: AsyncStream<GraphEvent>.Continuation
  var entity: String?
  var id: Value?
  var field: String?

  func wants(_ event: GraphEvent) -> Bool {
    if let entity, event.key.entity != entity { return false }
    if let id, event.key.id != id { return false }
    if let field, !event.touches(field: field) { return false }
    return true
  }
}

/// Everything a graph holds, guarded by ``ModelGraph``'s mutex.
struct GraphState: Sendable {
  var entries: [ModelKey: GraphEntry] = [:]
  /// Keys whose source may differ from the canonical value.
  var dirty: Set<ModelKey> = []
  var adapters: [String: EntityAdapter] = [:]
  var clock: UInt64 = 0

  var undo: [UndoGroup] = []
  var redo: [UndoGroup] = []
  var undoLimit = 100

  var willHooks: [String: [ErasedHook]] = [:]
  var didHooks: [String: [ErasedHook]] = [:]

  var subscribers: [UInt64: EventSubscriber] = [:]
  var outbox: [GraphEvent] = []
  var delivering = false

  var autoSave: AutoSave
  var suspensions = 0
  var changesSinceSave = 0
  var backgroundScheduled = false
  var backgroundTask: Task<Void, Never>?
  var backgroundError: (any Error)?

  var saving = false
  var saveWaiters: [CheckedContinuation<Void, Never>] = []

  /// The task that follows the store's change feed (see `ModelGraph+Following.swift`).
  var follower: Task<Void, Never>?
  /// The rows this graph's saves wrote (`nil`: deleted), per key in the order written, until the
  /// feed brings them back: a follower takes them as echoes, not as changes made elsewhere.
  var echoes: [ModelKey: [Row?]] = [:]

  init(autoSave: AutoSave) { self.autoSave = autoSave }

  /// A new number from the graph clock.
  mutating func tick() -> UInt64 {
    clock += 1
    return clock
  }

  /// Queues events for delivery if anyone listens.
  mutating func post(_ events: @autoclosure () -> [GraphEvent]) {
    if !subscribers.isEmpty { outbox.append(contentsOf: events()) }
  }

  /// Forgets every undo and redo step (their records may no longer be held).
  mutating func forgetHistory() {
    undo.removeAll()
    redo.removeAll()
  }
}
