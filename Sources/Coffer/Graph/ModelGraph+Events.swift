/// Change events as asynchronous sequences.
extension ModelGraph {
  /// Every event of this graph from now on, in the order the changes were made.
  ///
  /// ```swift
  /// for await event in graph.events() { print(event) }
  /// ```
  ///
  /// The stream buffers events until they are read and ends when it is dropped or its task is
  /// cancelled. Changes made with ``ChangeOptions/silent-type.property`` emit nothing.
  public func events() -> AsyncStream<GraphEvent> { subscribe(EventFilter()) }

  /// The events about values of one type — optionally only one id, and only events that touch
  /// one field (updates of it, inserts and deletes).
  ///
  /// ```swift
  /// for await event in graph.events(for: Note.self, field: "title") { … }
  /// ```
  public func events<T: Storable>(for type: T.Type, id: T.ID? = nil, field: String? = nil)
    -> AsyncStream<GraphEvent>
  {
    subscribe(EventFilter(entity: T.entityName, id: id?.storedValue, field: field))
  }

  /// The events about records of a run-time entity — optionally only one id, and only events
  /// that touch one attribute (updates of it, inserts and deletes): ``events(for:id:field:)-(_,T.ID?,_)``
  /// for a ``DynamicEntity``.
  ///
  /// ```swift
  /// for await event in graph.events(for: contacts, field: "name") { … }
  /// ```
  public func events(for entity: DynamicEntity, id: Value? = nil, field: String? = nil) -> AsyncStream<
    GraphEvent
  > {
    subscribe(EventFilter(entity: entity.name, id: id, field: field))
  }

  /// The events about one stored record — its entity and id — optionally only those that
  /// touch one attribute. A record without an id (not stored yet) has no events to follow: the
  /// stream then carries the events of every record of its entity.
  public func events(for record: DynamicRecord, field: String? = nil) -> AsyncStream<GraphEvent> {
    subscribe(EventFilter(entity: record.entity.name, id: record.id, field: field))
  }

  struct EventFilter {
    var entity: String?
    var id: Value?
    var field: String?
  }

  func subscribe(_ filter: EventFilter) -> AsyncStream<GraphEvent> {
    let (stream, continuation) = AsyncStream.makeStream(of: GraphEvent.self)
    let subscriber = EventSubscriber(
      continuation: continuation, entity: filter.entity, id: filter.id, field: filter.field)
    let number = state.withLock { state in
      let number = state.tick()
      state.subscribers[number] = subscriber
      return number
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.state.withLock { $0.subscribers.removeValue(forKey: number) }
    }
    return stream
  }

  /// Hands queued events to the streams, outside the lock. One caller delivers at a time, so
  /// events arrive in the order they were queued.
  func deliverEvents() {
    let start = state.withLock { state in
      if state.delivering || state.outbox.isEmpty { return false }
      state.delivering = true
      return true
    }
    guard start else { return }
    while true {
      let batch: ([GraphEvent], [EventSubscriber])? = state.withLock { state in
        if state.outbox.isEmpty {
          state.delivering = false
          return nil
        }
        defer { state.outbox.removeAll() }
        return (state.outbox, Array(state.subscribers.values))
      }
      guard let (events, subscribers) = batch else { return }
      for event in events {
        for subscriber in subscribers where subscriber.wants(event) { subscriber.continuation.yield(event) }
      }
    }
  }
}
