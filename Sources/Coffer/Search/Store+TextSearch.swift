extension Store {
  /// Whether the backend evaluates `matches` filters itself (``TextMatching``).
  var matchesTextNatively: Bool { backend is any TextMatching }

  /// Reads a checked query from the backend, searching text as ``TextSearch`` says.
  func readSearching(_ checked: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    guard TextSearch.searches(checked) else { return try await backend.read(checked, visit) }
    try await TextSearch.read(
      checked, nativeMatching: matchesTextNatively, using: { try await self.backend.read($0, $1) }, visit)
  }

  /// A checked query the backend can count or change by: its `matches` resolved when the
  /// backend cannot evaluate them, its relevance keys dropped.
  func resolvingSearch(_ checked: Query) async throws -> Query {
    try await TextSearch.resolvingFilter(checked, nativeMatching: matchesTextNatively) {
      try await self.backend.read($0, $1)
    }
  }
}
