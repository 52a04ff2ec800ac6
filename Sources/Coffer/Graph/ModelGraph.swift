/// One canonical value per record, and a unit of work over a ``Store``.
///
/// A graph holds at most one value per (entity, id): reading a record twice gives the same
/// value, and a change made through the graph is what every later read sees. Changes collect in
/// the graph and are written to the store as one atomic batch by ``save()`` — or automatically,
/// as the ``AutoSave`` policy says.
///
/// ```swift
/// let graph = ModelGraph(store: store)
/// var author = try await graph.instance(of: Author.self, id: "0001")   // get or create
/// author.name = "Ana"
/// try await graph.update(author)
/// try await graph.save()
/// ```
///
/// Around that core a graph offers change events (``events()``), validation (``Validatable``),
/// will/did-change hooks (``willChange(_:_:)``), undo and redo (``undo()``), scratch graphs that
/// commit into their parent or are dropped (``makeScratch()``), snapshots to a file
/// (``write(to:)``) and a task-local current graph (``withGraph(_:_:)``).
///
/// Values are Swift values: a graph hands out copies, and changing one changes nothing until it
/// is given back with ``update(_:options:)`` or changed in place with
/// ``update(_:id:options:_:)``. A graph is safe to share between tasks.
///
/// ## Topics
/// - ``instance(of:id:)``
/// - ``get(_:id:)``
/// - ``save()``
/// - ``makeScratch()``
public final class ModelGraph: Sendable {
  /// Where a graph reads records it does not hold and writes its changes.
  enum Source: Sendable {
    case store(Store)
    case parent(ModelGraph)
  }

  let source: Source
  /// The store at the root of the graph chain.
  public let store: Store
  let state: LockedState<GraphState>

  /// A graph over a store.
  ///
  /// - Parameters:
  ///   - store: the store the graph reads from and saves to.
  ///   - autoSave: when changes are written to the store; ``AutoSave/manual`` (only
  ///     ``save()``) by default.
  public init(store: Store, autoSave: AutoSave = .manual) {
    self.source = .store(store)
    self.store = store
    self.state = LockedState(GraphState(autoSave: autoSave))
  }

  deinit {
    state.withLock { $0.follower?.cancel() }
  }

  private init(parent: ModelGraph) {
    self.source = .parent(parent)
    self.store = parent.store
    self.state = LockedState(GraphState(autoSave: .manual))
  }

  /// A scratch graph on top of this one.
  ///
  /// It reads what this graph holds (including unsaved changes) and keeps its own changes to
  /// itself: this graph sees them only when the scratch graph commits (``commit()``). Dropping
  /// the scratch graph, or calling ``discard()``, throws its changes away. Scratch graphs nest.
  ///
  /// ```swift
  /// let draft = graph.makeScratch()
  /// try await draft.update(note.updating(\.title, to: "Draft"))
  /// try await draft.commit()   // or just drop it
  /// ```
  public func makeScratch() -> ModelGraph { ModelGraph(parent: self) }

  /// The graph a scratch graph commits into, or `nil` for a graph over a store.
  public var parent: ModelGraph? {
    if case .parent(let parent) = source { return parent }
    return nil
  }

  /// How many values the graph holds (deleted ones not counted).
  public var count: Int {
    state.withLock { state in state.entries.values.reduce(0) { $0 + ($1.current == nil ? 0 : 1) } }
  }

  /// A rough estimate of the memory the graph's records take, in bytes; for diagnostics only.
  public var estimatedByteSize: Int {
    state.withLock { state in
      state.entries.reduce(0) { total, element in
        let (key, entry) = element
        var size = 64 + key.id.estimatedByteSize
        if let current = entry.current { size += current.row.estimatedByteSize }
        if let stored = entry.stored, entry.isDirty { size += stored.estimatedByteSize }
        return total + size
      }
    }
  }

  /// Whether the graph has changes its source has not seen.
  public var hasChanges: Bool {
    state.withLock { state in state.dirty.contains { state.entries[$0]?.isDirty == true } }
  }

  /// Whether the graph holds a value of a type with an id, without reading the store.
  public func contains<T: Storable>(_ type: T.Type, id: T.ID) -> Bool {
    state.withLock { $0.entries[ModelKey(type, id: id)]?.current != nil }
  }

  /// Forgets the value of a type with an id, and any unsaved change to it, without deleting
  /// it from the store; the next read loads it again. Returns whether the graph held it.
  ///
  /// Forgetting a value also forgets the undo history, which may refer to it.
  @discardableResult
  public func remove<T: Storable>(_ type: T.Type, id: T.ID) -> Bool {
    let key = ModelKey(type, id: id)
    return state.withLock { state in
      guard state.entries.removeValue(forKey: key) != nil else { return false }
      state.dirty.remove(key)
      state.forgetHistory()
      return true
    }
  }

  /// Forgets every value, every unsaved change and the undo history. The store is unchanged.
  public func clear() {
    state.withLock { state in
      state.entries.removeAll()
      state.dirty.removeAll()
      state.forgetHistory()
    }
  }

  /// Drops a scratch graph's changes and values: the same as ``clear()``, named for intent.
  public func discard() { clear() }
}

extension Row {
  /// A rough size of the row's values in bytes.
  var estimatedByteSize: Int { values.reduce(16) { $0 + $1.estimatedByteSize } }
}

extension Value {
  /// A rough size of the value in bytes.
  var estimatedByteSize: Int {
    switch self {
    case .null, .bool: 1
    case .int, .double, .date: 8
    case .uuid: 16
    case .string(let text): 16 + text.utf8.count
    case .bytes(let data), .document(let data): 16 + data.count
    }
  }
}
