extension EntitySchema {
  /// The schema of a ``Storable`` type: from the fields it declares itself
  /// (`Storable._storedFields()`, which `@Storable` generates) or, when it declares none,
  /// derived from its `Decodable` conformance (``init(probing:)``).
  ///
  /// - Throws: ``CofferError/Code/invalidSchema`` with a message naming the field and the fix.
  public init<T: Storable>(for type: T.Type) throws {
    if let fields = try T._storedFields() {
      try self.init(storable: T.self, fields: fields)
    } else {
      try self.init(probing: T.self)
    }
  }

  /// Derives the schema of a ``Storable`` type from its `Decodable` conformance, ignoring any
  /// `Storable._storedFields()` it declares.
  ///
  /// The type is decoded once from a probing decoder that records, in order, each key the type
  /// asks for, the Swift type it asks for, and whether it asks with `decodeIfPresent` (an
  /// optional field). No instance of the type is kept.
  ///
  /// - Throws: ``CofferError/Code/invalidSchema`` when the type cannot be probed — for example an
  ///   enum property whose placeholder raw value is rejected and that is not `CaseIterable` — with
  ///   a message naming the field and the fix.
  @_spi(Backend) public init<T: Storable>(probing type: T.Type) throws {
    let recorder = ProbeRecorder(entity: T.entityName)
    do {
      _ = try T(from: ProbeDecoder(recorder: recorder, permissive: false))
    } catch let error as CofferError {
      throw error
    } catch {
      throw CofferError(
        .invalidSchema,
        "Could not derive the schema of \(T.self) from its Decodable conformance: \(error). "
          + "A custom init(from:) must accept any value of each field's type while the schema is probed.",
        entity: T.entityName, underlying: error)
    }
    let fields = recorder.fields.map { Field($0.name, $0.kind, isOptional: $0.isOptional) }
    try self.init(storable: T.self, fields: fields)
  }

  /// The schema of `T` with these fields: adds `T`'s defaults, id and indexes, and checks them.
  private init<T: Storable>(storable type: T.Type, fields declared: [Field]) throws {
    let defaults = T.fieldDefaults
    var fields = declared.map { field in
      Field(field.name, field.kind, isOptional: field.isOptional, default: defaults[field.name])
    }
    guard let idPosition = fields.firstIndex(where: { $0.name == T.idField }) else {
      throw CofferError(
        .invalidSchema,
        "\(T.self) decodes no field '\(T.idField)'. Make its id a stored property or set `static var idField`.",
        entity: T.entityName, field: T.idField)
    }
    if fields[idPosition].kind != T.ID.storedKind {
      throw CofferError(
        .invalidSchema,
        "The id field '\(T.idField)' of \(T.self) decodes as \(fields[idPosition].kind) but \(T.ID.self) ids are "
          + "stored as \(T.ID.storedKind).",
        entity: T.entityName, field: T.idField)
    }
    fields[idPosition].isOptional = false
    for name in defaults.keys where !fields.contains(where: { $0.name == name }) {
      throw CofferError(
        .invalidSchema, "\(T.self).fieldDefaults names '\(name)', which \(T.self) does not decode.",
        entity: T.entityName, field: name)
    }
    try self.init(
      name: T.entityName, fields: fields, idField: T.idField, indexes: T.indexes, references: T.references)
  }
}
