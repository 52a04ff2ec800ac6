@_spi(Backend) import Coffer

/// How a replica settles two changes of one field that were made without either seeing the
/// other (see <doc:Sync>).
///
/// Every replica merges by last writer wins. One replica — the server — may be given policies
/// per entity; it alone resolves. When it merges a change that conflicts with its own value of a
/// field, it writes the outcome as a change of its own, later than both, which every other
/// replica then takes by last writer wins. So replicas converge whatever the policy, and a custom
/// resolver runs in one place, once per conflict.
///
/// ```swift
/// let server = SyncReplica(
///   store: serverStore,
///   policies: [
///     "Invoice": .serverWins,
///     "Counter": .custom { conflict in
///       if case .int(let mine) = conflict.local, case .int(let theirs) = conflict.remote {
///         return .int(max(mine, theirs))
///       }
///       return conflict.remote
///     },
///   ])
/// ```
public struct SyncPolicy: Sendable {
  enum Rule: Sendable {
    case lastWriterWins
    case serverWins
    case custom(@Sendable (SyncFieldConflict) -> Value)
  }

  let rule: Rule

  /// The change with the later clock reading wins: the default, on every replica.
  public static let lastWriterWins = SyncPolicy(rule: .lastWriterWins)

  /// The replica given this policy — the server — keeps its value of a field against a change
  /// made without seeing it. A change made after seeing the server's value still wins.
  public static let serverWins = SyncPolicy(rule: .serverWins)

  /// `resolve` gives the value of a field two changes set without either seeing the other. It
  /// must return a value of the field's kind (or null for an optional field); another kind
  /// keeps what last writer wins gives. It runs inside a merge: keep it quick and pure.
  public static func custom(_ resolve: @escaping @Sendable (SyncFieldConflict) -> Value) -> SyncPolicy {
    SyncPolicy(rule: .custom(resolve))
  }
}

/// Two changes of one field made without either seeing the other, as a custom
/// ``SyncPolicy`` sees them.
public struct SyncFieldConflict: Sendable, Hashable {
  /// The row's entity.
  public var entity: String
  /// The row's id.
  public var id: Value
  /// The field.
  public var field: String
  /// The value the two changes replaced: the one both replaced, else the older of the two each
  /// replaced; `nil` when neither replaced one (both inserted the row).
  public var base: Value?
  /// The resolving replica's value.
  public var local: Value
  /// The value of the change it merges.
  public var remote: Value

  /// A conflict.
  public init(entity: String, id: Value, field: String, base: Value?, local: Value, remote: Value) {
    self.entity = entity
    self.id = id
    self.field = field
    self.base = base
    self.local = local
    self.remote = remote
  }
}

extension SyncReplica {
  /// `mine` merged with `theirs` under this replica's policy for the entity: last writer wins,
  /// then each field the two changed without seeing each other resolved and stamped anew.
  func resolved(_ mine: SyncRowState, _ theirs: SyncRowState) throws -> SyncRowState {
    var result = mine.merged(with: theirs)
    guard let policy = policies[mine.entity], let schema = schemas[mine.entity], result.isAlive else {
      return result
    }
    for field in schema.fields where field.name != schema.idField.name {
      guard let local = mine.fields[field.name], let remote = theirs.fields[field.name],
        local.value != remote.value, !local.saw(remote), !remote.saw(local),
        let winner = result.fields[field.name]
      else { continue }
      let value: Value
      switch policy.rule {
      case .lastWriterWins: continue
      case .serverWins: value = local.value
      case .custom(let resolve):
        let base: Value? =
          switch (local.base, remote.base) {
          case (let a?, let b?): a.clock <= b.clock ? a.value : b.value
          case (let a?, nil): a.value
          case (nil, let b?): b.value
          case (nil, nil): nil
          }
        value = resolve(
          SyncFieldConflict(
            entity: mine.entity, id: mine.id, field: field.name, base: base, local: local.value,
            remote: remote.value))
        guard value.isNull ? field.isOptional : value.kind == field.kind else { continue }
      }
      if value == winner.value { continue }
      result.fields[field.name] = SyncRowState.Stamped(value: value, clock: try tick(), base: winner.asBase)
    }
    return result
  }
}
