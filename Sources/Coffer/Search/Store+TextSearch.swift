extension Store {
  /// Whether the backend evaluates `matches` filters itself (``TextMatching``).
  var matchesTextNatively: Bool { backend is any TextMatching }

  /// Reads a checked query from the backend, searching text as ``TextSearch`` says.
  func readSearching(_ checked: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    guard TextSearch.searches(checked) else { return try await backend.read(checked, visit) }
    try await withSearchSource { reader, index in
      try await TextSearch.read(
        checked, nativeMatching: matchesTextNatively, index: index, using: reader, visit)
    }
  }

  /// Counts a checked query that searches text: where the backend's snapshots have text
  /// indexes, the search and the count read one snapshot.
  func countSearching(_ whole: Query) async throws -> Int {
    guard let indexed = backend as? any TextIndexSnapshots else {
      return try await backend.count(try await resolvingSearch(whole))
    }
    return try await indexed.withSnapshot { snapshot in
      if let index = snapshot as? any TextIndexReading,
        let count = try TextSearch.indexedCount(whole, index: index)
      {
        return count
      }
      let resolved = try await TextSearch.resolvingFilter(
        whole, nativeMatching: matchesTextNatively, index: snapshot as? any TextIndexReading,
        using: { try await snapshot.read($0, $1) })
      return try await snapshot.count(resolved)
    }
  }

  /// A checked query the backend can count or change by: its `matches` resolved when the
  /// backend cannot evaluate them, its relevance keys dropped.
  func resolvingSearch(_ checked: Query) async throws -> Query {
    try await TextSearch.resolvingFilter(checked, nativeMatching: matchesTextNatively) {
      try await self.backend.read($0, $1)
    }
  }

  /// Runs `body` with where a search reads: one snapshot, and its text indexes, when the
  /// backend's snapshots have them (``TextIndexSnapshots``), so the index and the rows agree;
  /// the backend, with no index, otherwise.
  func withSearchSource<R>(
    _ body: (@escaping TextSearch.Reader, (any TextIndexReading)?) async throws -> R
  ) async throws -> R {
    guard let indexed = backend as? any TextIndexSnapshots else {
      return try await body({ try await self.backend.read($0, $1) }, nil)
    }
    return try await indexed.withSnapshot { snapshot in
      try await body({ try await snapshot.read($0, $1) }, snapshot as? any TextIndexReading)
    }
  }
}
