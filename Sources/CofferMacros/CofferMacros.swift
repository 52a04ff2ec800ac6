@_exported import Coffer
@_exported import CofferMacroSupport

/// Makes a struct a stored model: conforms it to ``Coffer/Storable`` and
/// ``Coffer/KeyPathStorable`` with its schema, a row codec and a key-path map generated at
/// compile time, so nothing goes through `Codable` at run time.
///
/// ```swift
/// @Storable
/// struct Message {
///   var id: UUID
///   @Indexed var threadID: UUID
///   var text: String
///   var date: Date
///   var readAt: Date?
///   @Transient var isSelected = false
/// }
///
/// let page = try await store.query(Message.self)
///   .filter(\.threadID == thread && \.readAt == nil)
///   .sort(\.date, .descending)
///   .limit(50)
///   .fetch()
/// ```
///
/// Every stored property becomes a field, in declaration order, under its own name (or the one
/// `@StoredName` gives); optional properties are optional fields; constant initial values
/// (literals, enum cases) become field defaults. The schema and rows are exactly those the
/// type's `Codable` conformance would give, so a store written by one reads with the other.
///
/// - Parameters:
///   - entity: the entity's stored name; defaults to the type's name.
///   - id: the name of the id property; defaults to `"id"`. When another property is the id,
///     the macro declares `var id` from it for `Identifiable`.
@attached(
  extension, conformances: Storable, KeyPathStorable,
  names: named(entityName), named(idField), named(indexes), named(references), named(fieldDefaults),
  named(id),
  named(_storedFields), named(_storedRow), named(init(_storedRow:)),
  named(storedFieldName))
@attached(member, names: named(CodingKeys))
public macro Storable(entity: String? = nil, id: String? = nil) =
  #externalMacro(module: "CofferMacroPlugin", type: "StorableMacro")

/// Adds a secondary index on the property to a `@Storable` type's schema.
@attached(peer)
public macro Indexed() = #externalMacro(module: "CofferMacroPlugin", type: "FieldMarkerMacro")

/// Adds an index of a kind on the property to a `@Storable` type's schema: `@Indexed(.text)` is
/// a text index (`Index.text(on:)`) on a String property, for full-text search.
@attached(peer)
public macro Indexed(_ kind: IndexKind) =
  #externalMacro(module: "CofferMacroPlugin", type: "FieldMarkerMacro")

/// What kind of index `@Indexed(_:)` adds.
public enum IndexKind: Sendable {
  /// A text index: the words of the property's text, for `.matches` and relevance.
  case text
}

/// Adds a unique index on the property to a `@Storable` type's schema: no two values may have
/// equal non-null values in it.
@attached(peer)
public macro Unique() = #externalMacro(module: "CofferMacroPlugin", type: "FieldMarkerMacro")

/// Stores the property under another field name, e.g. to keep the stored name when the
/// property is renamed.
@attached(peer)
public macro StoredName(_ name: String) =
  #externalMacro(module: "CofferMacroPlugin", type: "FieldMarkerMacro")

/// Leaves the property out of storage. It must have an initial value (or be an optional `var`),
/// which it takes when a value is read back.
@attached(peer)
public macro Transient() = #externalMacro(module: "CofferMacroPlugin", type: "FieldMarkerMacro")

/// Declares the property a reference to the id of another `@Storable` type's entity, with
/// what deleting the referenced row does to this one (``Coffer/DeleteRule``; `.deny` unless
/// given). Every write keeps the reference whole (see ``Coffer/EntityReference``).
///
/// ```swift
/// @Storable
/// struct ChatMessage {
///   var id: Int64
///   @Reference(ChatThread.self, onDelete: .cascade) var threadID: Int64
///   var text: String
/// }
/// ```
@attached(peer)
public macro Reference(_ target: any Storable.Type, onDelete: DeleteRule = .deny) =
  #externalMacro(module: "CofferMacroPlugin", type: "FieldMarkerMacro")
