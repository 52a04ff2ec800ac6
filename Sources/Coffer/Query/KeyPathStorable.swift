/// A ``Storable`` type that maps its key paths to stored field names, so that queries can name
/// fields by key path and the compiler checks each field and the type of each value:
///
/// ```swift
/// let page = try await store.query(Message.self)
///   .filter(\.threadID == thread && \.date > cutoff)
///   .sort(\.date, .descending)
///   .limit(50)
///   .fetch()
/// ```
///
/// `@Storable` conforms the types it is attached to; any other type can conform by writing
/// ``storedFieldName(for:)``.
public protocol KeyPathStorable: Storable {
  /// The stored name of the field a key path reads, or `nil` when it reads no stored field
  /// (a computed or transient property, or a path into a property).
  static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String?
}

extension KeyPathStorable {
  /// The field a key path reads, for the ``FieldRef`` API, or `nil` when it reads no stored field.
  package static func field(_ keyPath: PartialKeyPath<Self>) -> FieldRef? {
    storedFieldName(for: keyPath).map(FieldRef.init)
  }

  /// The error for a key path that reads no stored field.
  static func notStored(_ keyPath: PartialKeyPath<Self>) -> CofferError {
    CofferError(
      .invalidQuery,
      "\(keyPath) does not name a stored field of \(Self.self); query stored properties only "
        + "(not computed, transient or nested ones).",
      entity: entityName)
  }
}
