/// The shape of one entity: its name, fields in row order, id field, indexes and constraints.
///
/// A schema comes from a ``Storable`` type (derived from its `Codable` conformance, see
/// ``EntitySchema/init(for:)``) or is built at run time for records with no Swift type.
///
/// ```swift
/// let schema = try EntitySchema(
///   name: "Contact",
///   fields: [
///     Field("id", .string),
///     Field("email", .string),
///     Field("age", .int, isOptional: true),
///   ],
///   idField: "id",
///   indexes: [Index(["email"], isUnique: true)])
/// ```
public struct EntitySchema: Sendable, Hashable, Codable {
  /// The entity's name, unique within a store. Any Unicode text.
  @inlinable public var name: String { storage.name }
  /// The fields in row order. The id field is one of them.
  @inlinable public var fields: [Field] { storage.fields }
  /// The position of the id field in ``fields``.
  @inlinable public var idPosition: Int { storage.idPosition }
  /// Secondary indexes and unique constraints.
  @inlinable public var indexes: [Index] { storage.indexes }
  /// The fields that hold another entity's ids, with what deleting a referenced row does.
  public var references: [EntityReference] { storage.references }

  /// The parts of a schema, in one immutable object: copying a schema (every query and batch
  /// carries one) is one reference, and two copies of one schema compare equal at once.
  @usableFromInline
  final class Storage: Sendable {
    @usableFromInline let name: String
    @usableFromInline let fields: [Field]
    @usableFromInline let idPosition: Int
    @usableFromInline let indexes: [Index]
    @usableFromInline let positions: [String: Int]
    let references: [EntityReference]
    /// Whether the id is a String, whose size as a key ``KeySize`` checks.
    let idHasVariableSize: Bool
    /// The field positions of each index with a String or bytes field, whose entries' size
    /// ``KeySize`` checks.
    let variableSizeIndexes: [[Int]]

    init(
      name: String, fields: [Field], idPosition: Int, indexes: [Index], positions: [String: Int],
      references: [EntityReference]
    ) {
      self.name = name
      self.fields = fields
      self.idPosition = idPosition
      self.indexes = indexes
      self.positions = positions
      self.references = references
      let variable: Set<FieldKind> = [.string, .bytes, .document]
      idHasVariableSize = variable.contains(fields[idPosition].kind)
      // A text index keeps words, not the field's value: no key holds the whole text.
      variableSizeIndexes = indexes.filter { !$0.isText }.map { $0.fields.compactMap { positions[$0] } }
        .filter {
          index in
          index.contains { variable.contains(fields[$0].kind) }
        }
    }
  }
  @usableFromInline let storage: Storage

  /// Makes a schema, checking that it is well formed.
  ///
  /// - Throws: ``CofferError/Code/invalidSchema`` when the name is empty, two fields share a
  ///   name, the id field is missing, optional or of a kind that cannot be an id, an index
  ///   names an unknown field, a text index is not on exactly one String field (or is unique),
  ///   or a reference names an unknown field, one that cannot hold an id, one referenced twice,
  ///   or nullifies a required field.
  public init(
    name: String, fields: [Field], idField: String, indexes: [Index] = [], references: [EntityReference] = []
  ) throws {
    func fail(_ message: String, field: String? = nil) -> CofferError {
      CofferError(.invalidSchema, message, entity: name.isEmpty ? nil : name, field: field)
    }
    guard !name.isEmpty else { throw fail("An entity name must not be empty.") }
    guard !fields.isEmpty else { throw fail("Entity '\(name)' has no fields; give it at least an id field.") }
    var positions: [String: Int] = [:]
    for (position, field) in fields.enumerated() {
      guard !field.name.isEmpty else {
        throw fail("Entity '\(name)' has a field with an empty name at position \(position).")
      }
      if positions.updateValue(position, forKey: field.name) != nil {
        throw fail("Entity '\(name)' declares field '\(field.name)' twice; rename one.", field: field.name)
      }
      if let value = field.defaultValue, !value.isNull, value.kind != field.kind {
        throw fail(
          "The default value \(value) of '\(name).\(field.name)' is not a \(field.kind).", field: field.name)
      }
      if let value = field.defaultValue, value.isNaN {
        // Rows could not hold it (NaN is refused as a value), and no store could record it.
        throw fail(
          "The default value of '\(name).\(field.name)' is NaN, which no row can hold. Give a number, or make the "
            + "field optional with no default.", field: field.name)
      }
    }
    guard let idPosition = positions[idField] else {
      throw fail(
        "Entity '\(name)' has no field '\(idField)' to use as its id; add it or name another id field.",
        field: idField)
    }
    let idDefinition = fields[idPosition]
    guard idDefinition.kind.canBeID else {
      throw fail(
        "The id '\(name).\(idField)' is a \(idDefinition.kind); ids must be Int64, String or UUID.",
        field: idField)
    }
    guard !idDefinition.isOptional else {
      throw fail("The id '\(name).\(idField)' must not be optional.", field: idField)
    }
    for index in indexes {
      guard !index.fields.isEmpty else { throw fail("An index of entity '\(name)' lists no fields.") }
      for field in index.fields where positions[field] == nil {
        throw fail("An index of entity '\(name)' names unknown field '\(field)'.", field: field)
      }
      if index.isText { try Self.checkText(index, entity: name, fields: fields, positions: positions) }
      for field in index.fields where fields[positions[field] ?? 0].kind == .document {
        throw fail(
          "Field '\(name).\(field)' holds a document and cannot be indexed; index a scalar field.",
          field: field)
      }
    }
    var referring: Set<String> = []
    for reference in references {
      let field = reference.field
      guard let position = positions[field] else {
        throw fail("A reference of entity '\(name)' names unknown field '\(field)'.", field: field)
      }
      guard fields[position].kind.canBeID, position != idPosition else {
        throw fail(
          "Field '\(name).\(field)' cannot refer to another row: a reference is a field of the referenced "
            + "entity's id kind (Int64, String or UUID), and not the id itself.", field: field)
      }
      guard !reference.entity.isEmpty else {
        throw fail("The reference of '\(name).\(field)' names no entity.", field: field)
      }
      guard referring.insert(field).inserted else {
        throw fail("Field '\(name).\(field)' is declared a reference twice; keep one.", field: field)
      }
      if reference.onDelete == .nullify, !fields[position].isOptional {
        throw fail(
          "The reference '\(name).\(field)' nullifies on delete, but the field is required. Make it optional "
            + "or choose cascade, deny or none.", field: field)
      }
    }
    storage = Storage(
      name: name, fields: fields, idPosition: idPosition, indexes: indexes, positions: positions,
      references: references)
  }

  /// The id field.
  public var idField: Field { fields[idPosition] }

  /// The position of a field by name, or `nil` if the entity has no such field.
  @inlinable
  public func position(of field: String) -> Int? { positionTable[field] }

  /// The field with a name, or `nil`.
  public func field(named name: String) -> Field? { position(of: name).map { fields[$0] } }

  /// The unique constraints: the indexes with ``Index/isUnique`` set.
  @_spi(Backend) public var uniqueIndexes: [Index] { indexes.filter(\.isUnique) }

  /// The indexes that order rows by their fields' values (unique or not): every index but the
  /// text indexes, which a backend keeps as words (or not at all) and never as a B-tree of values.
  package var orderedIndexes: [Index] { indexes.filter { !$0.isText } }

  /// The fields with a text index (``Index/text(on:)``), in the order the indexes are declared.
  package var textIndexedFields: [String] { indexes.filter(\.isText).compactMap(\.fields.first) }

  /// Checks that a text index is on one String field and is not unique.
  private static func checkText(_ index: Index, entity: String, fields: [Field], positions: [String: Int])
    throws
  {
    guard index.fields.count == 1, let field = index.fields.first else {
      throw CofferError(
        .invalidSchema,
        "A text index of entity '\(entity)' lists \(index.fields.count) fields; a text index is on one String "
          + "field. Declare one Index.text(on:) per field to search.", entity: entity)
    }
    guard let position = positions[field], fields[position].kind == .string else {
      let kind = positions[field].map { "a \(fields[$0].kind)" } ?? "not a field"
      throw CofferError(
        .invalidSchema,
        "The text index on '\(entity).\(field)' is on \(kind); a text index is on a String field (optional or "
          + "not). Index a String field, or use Index.on(_:) for an ordered index.", entity: entity,
        field: field)
    }
    guard !index.isUnique else {
      throw CofferError(
        .invalidSchema,
        "The text index on '\(entity).\(field)' is also unique; a text index cannot be. Declare "
          + "Index.unique(_:) and Index.text(on:) as two indexes.", entity: entity, field: field)
    }
  }

  @usableFromInline
  var positionTable: [String: Int] { storage.positions }

  private enum CodingKeys: String, CodingKey { case name, fields, idField, indexes, references }

  /// Decodes a schema from its stored description and checks it again.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    try self.init(
      name: container.decode(String.self, forKey: .name),
      fields: container.decode([Field].self, forKey: .fields),
      idField: container.decode(String.self, forKey: .idField),
      indexes: container.decode([Index].self, forKey: .indexes),
      references: container.decodeIfPresent([EntityReference].self, forKey: .references) ?? [])
  }

  /// Encodes the schema's description (name, fields, id field, indexes and, when there are
  /// any, references: a schema without references encodes as it did before they existed).
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(name, forKey: .name)
    try container.encode(fields, forKey: .fields)
    try container.encode(idField.name, forKey: .idField)
    try container.encode(indexes, forKey: .indexes)
    if !references.isEmpty { try container.encode(references, forKey: .references) }
  }

  /// Whether both schemas are one value (the same storage), which makes them equal without
  /// comparing anything: the common case of a reader passing the schema an entity was
  /// prepared with.
  func isIdentical(to other: EntitySchema) -> Bool { storage === other.storage }

  /// Schemas are equal when name, fields, id, indexes and references are.
  public static func == (lhs: EntitySchema, rhs: EntitySchema) -> Bool {
    if lhs.isIdentical(to: rhs) { return true }
    return lhs.name == rhs.name && lhs.fields == rhs.fields && lhs.idPosition == rhs.idPosition
      && lhs.indexes == rhs.indexes && lhs.references == rhs.references
  }

  /// Hashes name, fields, id, indexes and references.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(name)
    hasher.combine(fields)
    hasher.combine(idPosition)
    hasher.combine(indexes)
    hasher.combine(references)
  }
}

/// One field of an entity.
public struct Field: Sendable, Hashable, Codable {
  /// The stored name (the `CodingKey` string for a ``Storable`` type).
  public var name: String
  /// What values the field holds.
  public var kind: FieldKind
  /// Whether the field may be ``Value/null``.
  public var isOptional: Bool
  /// The value that rows stored before this field existed read as. `nil` means none: such a
  /// field can be added to an existing entity only if it is optional (old rows read `null`).
  ///
  /// A null default is no default, and reads back as `nil`: every store then lists the field
  /// the same way, also one (a property list) that cannot write a null.
  public var defaultValue: Value? {
    get { storedDefault }
    set { storedDefault = newValue?.isNull == true ? nil : newValue }
  }
  private var storedDefault: Value?

  /// A field.
  public init(_ name: String, _ kind: FieldKind, isOptional: Bool = false, default defaultValue: Value? = nil)
  {
    self.name = name
    self.kind = kind
    self.isOptional = isOptional
    self.defaultValue = defaultValue
  }

  private enum CodingKeys: String, CodingKey { case name, kind, isOptional, defaultValue }

  /// Decodes a field description.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    name = try container.decode(String.self, forKey: .name)
    kind = try container.decode(FieldKind.self, forKey: .kind)
    isOptional = try container.decode(Bool.self, forKey: .isOptional)
    defaultValue = try container.decodeIfPresent(Value.self, forKey: .defaultValue)
  }

  /// Encodes a field description.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(name, forKey: .name)
    try container.encode(kind, forKey: .kind)
    try container.encode(isOptional, forKey: .isOptional)
    try container.encodeIfPresent(defaultValue, forKey: .defaultValue)
  }
}

/// A secondary index over one or more fields; a unique index is also a constraint.
///
/// A ``Storable`` type lists its indexes in ``Storable/indexes``, naming fields by their stored
/// names: for a `Codable` type, the coding keys (the property names, unless `CodingKeys` renames
/// them); for `@Storable`, the property names or their `@StoredName`.
///
/// ```swift
/// struct User: Storable {
///   var id: UUID
///   var email: String
///   var teamID: Int64
///   var joined: Date
///
///   static var indexes: [Index] { [.unique("email"), .on("teamID", "joined")] }
/// }
/// ```
///
/// An index that names a field the type does not have fails with
/// ``CofferError/Code/invalidSchema`` when the store first prepares the type.
public struct Index: Sendable, Hashable, Codable {
  /// The indexed fields, most significant first.
  public var fields: [String]
  /// Whether no two rows may have equal values in all of ``fields``. Rows with a null in any
  /// of the fields are exempt, as in SQL.
  public var isUnique: Bool
  /// What else the index is besides an ordered one: `nil` for an ordinary (or unique) index,
  /// which a schema stored before text indexes existed decodes as.
  private var kind: Kind?

  private enum Kind: String, Sendable, Hashable, Codable {
    case text
  }

  /// An index over fields.
  public init(_ fields: [String], isUnique: Bool = false) {
    self.fields = fields
    self.isUnique = isUnique
  }

  /// A unique index over fields, most significant first: no two rows may have equal values in
  /// all of them (rows with a null in any of them are exempt).
  ///
  /// - Returns: an index with ``isUnique`` set. A change that breaks it fails with
  ///   ``CofferError/Code/uniqueViolation`` and applies nothing.
  public static func unique(_ fields: String...) -> Index { Index(fields, isUnique: true) }

  /// A non-unique index over fields, most significant first, to make filters and sorts on them
  /// fast.
  ///
  /// - Returns: an index with ``isUnique`` unset.
  public static func on(_ fields: String...) -> Index { Index(fields) }

  /// A text index on one String field (optional or not): the words of each row's text, so that
  /// ``Filter/matches(field:query:)`` and ``Sort/relevance(_:)`` on the field need not read every
  /// row. A search gives the same answers with or without it; a backend without a text index
  /// of its own records the index in the schema and reads every row, as it does without one.
  ///
  /// ```swift
  /// static var indexes: [Index] { [.text(on: "body")] }
  /// ```
  ///
  /// - Returns: a text index (named `text:FIELD`). A text index on anything but one String field
  ///   fails with ``CofferError/Code/invalidSchema`` when the store prepares the entity.
  public static func text(on field: String) -> Index {
    var index = Index([field])
    index.kind = .text
    return index
  }

  /// Whether the index is a text index (``text(on:)``): it holds words for full-text search, not
  /// the field's values in order. A backend builds no ordered index for it.
  @_spi(Backend) public var isText: Bool { kind == .text }

  /// A stable name for the index, derived from its kind and fields, for backends and tools that
  /// need one: `index:F,G`, `unique:F,G` or `text:F`.
  @_spi(Backend) public var name: String {
    (isText ? "text:" : isUnique ? "unique:" : "index:") + fields.joined(separator: ",")
  }

  /// The index over other fields: the same kind of index, with each field renamed by `rename`.
  package func renamingFields(_ rename: (String) -> String) -> Index {
    var index = self
    index.fields = fields.map(rename)
    return index
  }
}
