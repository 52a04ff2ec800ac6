@_spi(Backend) import Coffer

/// The body of every answer that is not a success: `{"error":{"code":"duplicateID",…}}`.
package struct WireError: Codable, Sendable, Hashable {
  /// The error's fields.
  package struct Detail: Codable, Sendable, Hashable {
    /// ``CofferError/Code/name``.
    package var code: String
    /// What happened and what to do.
    package var message: String
    /// The store's name.
    package var store: String?
    /// The entity.
    package var entity: String?
    /// The id, as text.
    package var id: String?
    /// The id as a value, when the error has one.
    package var idValue: Value?
    /// The field.
    package var field: String?
  }

  /// The error.
  package var error: Detail

  /// The wire form of an error. The `path` and the underlying cause stay on the server.
  package init(_ error: CofferError) {
    self.error = Detail(
      code: error.code.name, message: error.message, store: error.store, entity: error.entity, id: error.id,
      idValue: error.idValue, field: error.field)
  }

  /// The error the server sent, with the same code (``CofferError/Code/backendFailure`` for a
  /// code this build does not know).
  package var cofferError: CofferError {
    let code = Self.code(named: error.code) ?? .backendFailure
    var rebuilt: CofferError
    if let idValue = error.idValue {
      rebuilt = CofferError(
        code, error.message, store: error.store, entity: error.entity, id: idValue, field: error.field)
    } else {
      rebuilt = CofferError(
        code, error.message, store: error.store, entity: error.entity, id: error.id, field: error.field)
    }
    rebuilt.id = error.id ?? rebuilt.id
    return rebuilt
  }

  /// Every code, by name.
  package static func code(named name: String) -> CofferError.Code? { codes[name] }

  private static let codes: [String: CofferError.Code] = {
    let all: [CofferError.Code] = [
      .duplicateID, .notFound, .uniqueViolation, .referenceViolation, .invalidValue, .valueOutOfRange,
      .invalidSchema, .schemaMismatch, .invalidQuery, .unknownEntity, .invalidURL, .unknownScheme,
      .decodingFailed, .corruptStore, .storageFull, .locked, .io, .closed, .unsupported, .changeVetoed,
      .invalidConfiguration, .unavailable, .accessDenied, .timedOut, .conflict, .notEmpty, .invalidInput,
      .migrationFailed, .unknownMigration, .changesTrimmed, .backendFailure,
    ]
    return Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
  }()
}
