/// A value type that a ``Store`` can keep.
///
/// Conform a `Codable` struct and you are done: the schema — field names, kinds and
/// optionality, in declaration order — is derived from the type's `Codable` conformance the
/// first time a store sees it. No field list is written by hand.
///
/// ```swift
/// struct Message: Storable {
///   var id: Int64
///   var threadID: Int64
///   var text: String
///   var date: Date
///   var readAt: Date?
///
///   static var indexes: [Index] { [.on("threadID", "date")] }
/// }
/// ```
///
/// Properties may be any integer type, `Bool`, `Float`/`Double`, `String`, `Date`, `UUID`,
/// `Data`, `URL`, an enum with a `String` or integer raw value that is `CaseIterable`, an optional
/// of any of these, or any other `Codable` value (arrays, dictionaries, nested structs), which is
/// stored as a document.
///
/// With the `CofferMacros` product, `@Storable` writes the conformance instead: the schema and a
/// row codec are generated at compile time, giving the same schema and rows as the `Codable`
/// derivation, faster. The macro implements three underscored requirements for that
/// (`_storedFields()`, `_storedRow()`, `init(_storedRow:)`); they are not for you to call or
/// write, and their defaults derive everything from `Codable`.
///
/// ## Topics
/// - ``entityName``
/// - ``idField``
/// - ``indexes``
/// - ``fieldDefaults``
public protocol Storable: Codable, Sendable, Identifiable where ID: StorableID {
  /// The entity's stored name. Defaults to the type's name; set it to rename the type without
  /// moving its data, or to give two versions of a type one entity.
  static var entityName: String { get }
  /// The coding key of the id property. Defaults to `"id"`.
  static var idField: String { get }
  /// Secondary indexes and unique constraints. Defaults to none.
  static var indexes: [Index] { get }
  /// The fields that hold other entities' ids, with their delete rules (see
  /// ``EntityReference``). Defaults to none.
  static var references: [EntityReference] { get }
  /// Values that rows stored before a field existed read as, by field name. A field added to a
  /// stored entity must be optional or have a default here. Defaults to none.
  static var fieldDefaults: [String: Value] { get }

  /// The fields in row order, when the type encodes and decodes its rows itself (`@Storable`
  /// generates this), or `nil` (the default) to derive the schema and the row codec from the
  /// type's `Codable` conformance. Defaults, the id and indexes still come from the properties
  /// above.
  static func _storedFields() throws -> [Field]?

  /// The value as a row in the order of `_storedFields()`. Only called when that is not `nil`;
  /// the default encodes through `Codable`.
  func _storedRow() throws -> Row

  /// The value a stored row in the order of `_storedFields()` stands for: a ``Row``'s values,
  /// or a backend's row read in place. Only called when `_storedFields()` is not `nil`; the
  /// default decodes through `Codable`.
  init(_storedRow row: StoredRow) throws
}

extension Storable {
  /// The type's name.
  public static var entityName: String { String(describing: Self.self) }
  /// `"id"`.
  public static var idField: String { "id" }
  /// No indexes.
  public static var indexes: [Index] { [] }
  /// No references.
  public static var references: [EntityReference] { [] }
  /// No defaults.
  public static var fieldDefaults: [String: Value] { [:] }
  /// `nil`: the schema and rows are derived from `Codable`.
  public static func _storedFields() throws -> [Field]? { nil }
  /// Encodes through `Codable`, with the schema derived from `Codable`.
  public func _storedRow() throws -> Row {
    try RowEncoder(schema: EntitySchema(probing: Self.self)).encode(self)
  }
  /// Decodes through `Codable`, with the schema derived from `Codable`.
  public init(_storedRow row: StoredRow) throws {
    self = try RowDecoder(schema: EntitySchema(probing: Self.self)).decode(Self.self, from: row.values())
  }
}
