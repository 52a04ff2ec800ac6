extension MigrationStep {
  /// Renames an entity, keeping its rows; references other entities hold to it follow.
  /// No row is rewritten.
  public static func renameEntity(_ name: String, from old: String, to new: String) -> MigrationStep {
    MigrationStep(name: name, summary: "rename entity '\(old)' to '\(new)'") { context in
      let schema = try context.schema(of: old)
      guard try !context.hasEntity(new) else {
        throw context.failure(
          "the store already has an entity '\(new)'; remove or rename it first.", entity: new)
      }
      func retargeted(_ references: [EntityReference]) -> [EntityReference] {
        references.map { reference in
          var reference = reference
          if reference.entity == old { reference.entity = new }
          return reference
        }
      }
      try context.relabel(
        old, as: try schema.renamed(to: new).rebuilt(references: retargeted(schema.references)))
      for other in try context.schemas()
      where other.name != new && other.references.contains(where: { $0.entity == old }) {
        try context.relabel(other.name, as: try other.rebuilt(references: retargeted(other.references)))
      }
    }
  }

  /// Renames a field of an entity, keeping its values, indexes and references. No row is
  /// rewritten.
  public static func renameField(_ name: String, entity: String, from old: String, to new: String)
    -> MigrationStep
  {
    MigrationStep(name: name, summary: "rename field '\(old)' of '\(entity)' to '\(new)'") { context in
      let schema = try context.schema(of: entity)
      guard schema.position(of: old) != nil else { throw context.missingField(old, of: entity) }
      guard schema.position(of: new) == nil else {
        throw context.failure(
          "entity '\(entity)' already has a field '\(new)'; remove it or pick another name.", entity: entity,
          field: new)
      }
      func renamed(_ field: String) -> String { field == old ? new : field }
      let fields = schema.fields.map { field in
        var field = field
        field.name = renamed(field.name)
        return field
      }
      let renamedSchema = try schema.rebuilt(
        fields: fields, idField: renamed(schema.idField.name),
        indexes: schema.indexes.map { $0.renamingFields(renamed) },
        references: schema.references.map { reference in
          var reference = reference
          reference.field = renamed(reference.field)
          return reference
        })
      try context.relabel(entity, as: renamedSchema)
    }
  }

  /// Changes the kind of a field, converting every stored value (nulls stay null): one pass
  /// over the entity's rows. `isOptional` changes whether the field may be null (`nil` keeps
  /// it). A default the field had is converted too, and dropped when it cannot be.
  ///
  /// - Parameters:
  ///   - name: the step's name in the plan and the store's record.
  ///   - entity: the entity whose field changes.
  ///   - field: the field that changes kind.
  ///   - kind: the field's new kind.
  ///   - isOptional: whether the field may be null from now on; `nil` keeps what it was.
  ///   - conversion: how each value becomes one of the new kind; a value it cannot convert
  ///     fails the step, naming the row's id and the field.
  public static func changeKind(
    _ name: String, entity: String, field: String, to kind: FieldKind, isOptional: Bool? = nil,
    using conversion: FieldConversion
  ) -> MigrationStep {
    MigrationStep(
      name: name, summary: "change field '\(field)' of '\(entity)' to \(kind) (\(conversion.name))"
    ) {
      context in
      let schema = try context.schema(of: entity)
      guard let position = schema.position(of: field) else { throw context.missingField(field, of: entity) }
      var fields = schema.fields
      let old = fields[position]
      let defaultValue = old.defaultValue.flatMap { value in
        value.isNull ? value : try? conversion.convert(value)
      }
      fields[position] = Field(
        field, kind, isOptional: isOptional ?? old.isOptional,
        default: defaultValue.flatMap { $0.isNull || $0.kind == kind ? $0 : nil })
      let newSchema: EntitySchema
      do {
        newSchema = try schema.rebuilt(fields: fields)
      } catch let error as CofferError {
        throw context.failure(error.message, entity: entity, field: field, underlying: error)
      }
      // A conversion that converts every value, into a field no stricter about nulls, fails
      // no row: the backend may run it in its engine.
      let inEngine = conversion.builtIn.flatMap { builtIn in
        builtIn.convertsEveryValue && (newSchema.fields[position].isOptional || !old.isOptional)
          ? [position: builtIn] : nil
      }
      try context.rewriteRows(entity, as: newSchema, inEngine: inEngine) { row in
        var row = row
        let value = row[position]
        if !value.isNull {
          do {
            row.values[position] = try conversion.convert(value)
          } catch {
            throw context.failure(
              "the value of field '\(field)' of \(entity) id \(row[schema.idPosition]) cannot be converted "
                + "(\(conversion.name)). Fix the row first, or convert with a custom conversion.",
              entity: entity, id: row[schema.idPosition], field: field, underlying: error)
          }
        }
        return row
      }
    }
  }

  /// Changes the kind of a field with the built-in conversion from its stored kind (see
  /// ``FieldConversion/builtIn(from:to:)``); fails when Coffer has none for the two kinds.
  public static func changeKind(
    _ name: String, entity: String, field: String, to kind: FieldKind, isOptional: Bool? = nil
  ) -> MigrationStep {
    MigrationStep(name: name, summary: "change field '\(field)' of '\(entity)' to \(kind)") { context in
      let schema = try context.schema(of: entity)
      guard let stored = schema.field(named: field) else { throw context.missingField(field, of: entity) }
      guard let conversion = FieldConversion.builtIn(from: stored.kind, to: kind) else {
        throw context.failure(
          "Coffer has no built-in conversion from \(stored.kind) to \(kind); write the step in Swift with a "
            + "custom FieldConversion.", entity: entity, field: field)
      }
      try changeKind(name, entity: entity, field: field, to: kind, isOptional: isOptional, using: conversion)
        .body(context)
    }
  }

  /// Adds a field whose value in each stored row is computed from the row (also a required
  /// field with no default): one pass over the entity's rows.
  ///
  /// - Parameters:
  ///   - name: the step's name in the plan and the store's record.
  ///   - entity: the entity that gets the field.
  ///   - field: the new field.
  ///   - compute: the new field's value for a stored record (of the schema before the step);
  ///     ``Value/null`` only for an optional field. When `nil`, every row gets the field's
  ///     default (or null).
  public static func addField(
    _ name: String, entity: String, _ field: Field,
    compute: (@Sendable (DynamicRecord) throws -> Value)? = nil
  ) -> MigrationStep {
    MigrationStep(name: name, summary: "add field '\(field.name)' to '\(entity)'") { context in
      let schema = try context.schema(of: entity)
      guard schema.position(of: field.name) == nil else {
        throw context.failure(
          "entity '\(entity)' already has a field '\(field.name)'; rename the new one.", entity: entity,
          field: field.name)
      }
      let newSchema = try schema.rebuilt(fields: schema.fields + [field])
      let input = try DynamicEntity(schema: schema)
      try context.rewriteRows(entity, as: newSchema) { row in
        let value: Value
        if let compute {
          do {
            value = try compute(DynamicRecord(input, row: row))
          } catch {
            throw context.failure(
              "computing field '\(field.name)' for \(entity) id \(row[schema.idPosition]) threw.",
              entity: entity,
              id: row[schema.idPosition], field: field.name, underlying: error)
          }
        } else {
          value = field.defaultValue ?? .null
        }
        return Row(row.values + [value])
      }
    }
  }

  /// Removes a field and its data from every row, with the indexes and references that use
  /// it: one pass over the entity's rows. The id field cannot be removed.
  public static func removeField(_ name: String, entity: String, field: String) -> MigrationStep {
    MigrationStep(name: name, summary: "remove field '\(field)' of '\(entity)'") { context in
      let schema = try context.schema(of: entity)
      guard let position = schema.position(of: field) else { throw context.missingField(field, of: entity) }
      guard position != schema.idPosition else {
        throw context.failure(
          "field '\(field)' is the id of '\(entity)' and cannot be removed; rewrite the entity with a custom step.",
          entity: entity, field: field)
      }
      var fields = schema.fields
      fields.remove(at: position)
      let newSchema = try schema.rebuilt(
        fields: fields, indexes: schema.indexes.filter { !$0.fields.contains(field) },
        references: schema.references.filter { $0.field != field })
      try context.rewriteRows(entity, as: newSchema) { row in
        var row = row
        row.values.remove(at: position)
        return row
      }
    }
  }

  /// Removes an entity with all its rows. Fails while another entity refers to it: remove
  /// that reference's field first.
  public static func removeEntity(_ name: String, entity: String) -> MigrationStep {
    MigrationStep(name: name, summary: "remove entity '\(entity)'") { context in
      let schema = try context.schema(of: entity)
      if let referrer = try context.schemas().first(where: { other in
        other.name != entity && other.references.contains { $0.entity == entity }
      }) {
        throw context.failure(
          "entity '\(referrer.name)' refers to '\(entity)'; remove that field first.", entity: entity)
      }
      try context.drop(schema.name)
    }
  }

  /// Adds an index, a unique constraint or a text index (``Index/text(on:)``) to an entity: one
  /// pass over its rows. A unique index that stored rows break fails the step, naming the ids
  /// of the rows that clash.
  public static func addIndex(_ name: String, entity: String, _ index: Index) -> MigrationStep {
    let kind = index.isText ? "text index" : index.isUnique ? "unique index" : "index"
    return MigrationStep(
      name: name, summary: "add \(kind) on \(index.fields.joined(separator: ", ")) of '\(entity)'"
    ) { context in
      let schema = try context.schema(of: entity)
      let positions = try index.fields.map { field in
        guard let position = schema.position(of: field) else { throw context.missingField(field, of: entity) }
        return position
      }
      guard !schema.indexes.contains(where: { $0.fields == index.fields && $0.isText == index.isText }) else {
        throw context.failure(
          "entity '\(entity)' already has \(index.isText ? "a text index" : "an index") on \(index.fields.joined(separator: ", ")).",
          entity: entity)
      }
      let newSchema: EntitySchema
      do {
        newSchema = try schema.rebuilt(indexes: schema.indexes + [index])
      } catch let error as CofferError {
        throw context.failure(error.message, entity: entity, underlying: error)
      }
      var firstHolder: [[Value]: Value] = [:]
      var clashing: [Value] = []
      try context.rewriteRows(entity, as: newSchema) { row in
        guard index.isUnique else { return row }
        let key = positions.map { row[$0] }
        if key.contains(where: \.isNull) { return row }
        if let holder = firstHolder[key] {
          if clashing.isEmpty { clashing.append(holder) }
          clashing.append(row[schema.idPosition])
          return nil
        }
        firstHolder[key] = row[schema.idPosition]
        return row
      }
      if !clashing.isEmpty {
        // In id order, so that every backend names the same rows whatever order it scans in.
        clashing.sort { ValueOrder.compare($0, $1) < 0 }
        let shown = clashing.prefix(10).map(\.description).joined(separator: ", ")
        throw context.failure(
          "rows of \(entity) share values of the new unique index on \(index.fields.joined(separator: ", ")) "
            + "(ids \(shown)\(clashing.count > 10 ? ", …" : "")). Make them unique in an earlier step.",
          entity: entity, id: clashing[0], field: index.fields.first)
      }
    }
  }

  /// Drops the index (or unique constraint) on exactly these fields: one pass over the
  /// entity's rows.
  public static func dropIndex(_ name: String, entity: String, fields: [String]) -> MigrationStep {
    MigrationStep(name: name, summary: "drop index on \(fields.joined(separator: ", ")) of '\(entity)'") {
      context in
      let schema = try context.schema(of: entity)
      guard schema.indexes.contains(where: { $0.fields == fields }) else {
        throw context.failure(
          "entity '\(entity)' has no index on \(fields.joined(separator: ", ")).", entity: entity)
      }
      let newSchema = try schema.rebuilt(indexes: schema.indexes.filter { $0.fields != fields })
      try context.rewriteRows(entity, as: newSchema) { $0 }
    }
  }
}

extension MigrationContext {
  /// The failure of a step naming a field its entity does not have.
  func missingField(_ field: String, of entity: String) -> CofferError {
    failure(
      "entity '\(entity)' has no field '\(field)'. Check the step against `coffer inspect`.", entity: entity,
      field: field)
  }
}
