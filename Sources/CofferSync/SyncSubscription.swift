@_spi(Backend) import Coffer

/// The rows of one entity a partial replica keeps: those its filter matches (see <doc:Sync>,
/// "Partial sync").
///
/// A replica with subscriptions stores exactly the rows some subscription matches, judged on
/// each row's merged sync state; rows of entities no subscription names are not synced to it.
///
/// ```swift
/// let phone = SyncReplica(
///   store: deviceStore,
///   subscriptions: [
///     try SyncSubscription(Notebook.self, where: \.owner == "ann"),
///     SyncSubscription("Settings"),
///   ])
/// ```
public struct SyncSubscription: Sendable, Hashable {
  /// The entity.
  public var entity: String
  /// The rows of it the replica keeps; ``Filter/all`` for every row.
  public var filter: Filter

  /// A subscription to the rows of `entity` that `filter` matches (every row by default).
  public init(_ entity: String, where filter: Filter = .all) {
    self.entity = entity
    self.filter = filter
  }

  /// A subscription to the rows of a model type that a key-path filter matches:
  /// `try SyncSubscription(Notebook.self, where: \.owner == "ann")`.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` when a key path reads no stored field.
  public init<Root: KeyPathStorable>(_ type: Root.Type, where filter: KeyPathFilter<Root>) throws {
    if let error = filter.error { throw error }
    self.init(Root.entityName, where: filter.filter)
  }
}

/// A replica's subscriptions, ready to judge row states: for each entity, the filters any of which
/// keeps a row, compiled against the entity's schema.
package struct SyncSubscriptions: Sendable {
  let list: [SyncSubscription]
  /// What identifies the list: a message filtered for it names it, and a replica takes only
  /// messages filtered for its own list (or not filtered).
  let fingerprint: String
  private var compiled: [String: [CompiledFilter]] = [:]

  init(_ list: [SyncSubscription]) {
    self.list = list
    fingerprint = Self.fingerprint(list)
  }

  /// The fingerprint of a list: the same subscriptions in any order give the same text.
  package static func fingerprint(_ list: [SyncSubscription]) -> String {
    Set(list.map { $0.entity + "\u{1F}" + String(reflecting: $0.filter) }).sorted().joined(
      separator: "\u{1E}")
  }

  /// Whether some subscription names the entity.
  func covers(_ entity: String) -> Bool { list.contains { $0.entity == entity } }

  /// Whether a row state lies within the subscriptions, judged on its values (also for a deleted
  /// row: its last values); a state without values (a tombstone that kept none) lies within them
  /// when its entity is covered. Each entity's filters are compiled the first time.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for a filter that names a field the entity lacks.
  mutating func keeps(_ state: SyncRowState, schema: EntitySchema) throws -> Bool {
    guard covers(state.entity) else { return false }
    if state.fields.isEmpty { return true }
    let filters: [CompiledFilter]
    if let known = compiled[state.entity] {
      filters = known
    } else {
      filters = try list.filter { $0.entity == state.entity }.map {
        try CompiledFilter($0.filter, schema: schema)
      }
      compiled[state.entity] = filters
    }
    let row = Row(schema.fields.map { state.fields[$0.name]?.value ?? $0.defaultValue ?? .null })
    return filters.contains { $0.matches(row) }
  }
}

extension SyncRowState {
  /// The state with its values withheld: each field's clock and the tombstone, every value null.
  /// What a sender tells a partial replica of a row that lies outside its subscriptions.
  var withheld: SyncRowState {
    var result = self
    for (name, stamped) in fields { result.fields[name] = Stamped(value: .null, clock: stamped.clock) }
    return result
  }

  /// Whether every clock of this state is at or before the same one in `other`: merging this
  /// state into `other` changes nothing.
  func isCovered(by other: SyncRowState) -> Bool {
    for (name, mine) in fields {
      guard let theirs = other.fields[name], theirs.clock >= mine.clock else { return false }
    }
    if let deleted {
      guard let theirs = other.deleted, theirs >= deleted else { return false }
    }
    return true
  }
}
