@_spi(Backend) import Coffer

extension Catalog.EntityRecord {
  /// The entry of an entity relabelled as `schema` (which differs from the current layout only
  /// in names): the same databases and layout numbers, the current layout replaced by `schema`,
  /// and every other layout renamed the same way, so that rows written under any layout are
  /// kept as they are and still read by field name (``Coffer/SchemaEvolution``).
  ///
  /// A field of an older layout that the current one no longer has keeps its name unless a
  /// relabelled field takes it; then it is renamed out of the way (`NAME~dropped`), since it
  /// is ignored when such rows are read.
  func relabelled(as schema: EntitySchema) throws -> Catalog.EntityRecord {
    var names: [String: String] = [:]
    for (old, new) in zip(layouts[current].fields, schema.fields) { names[old.name] = new.name }
    let taken = Set(schema.fields.map(\.name))
    var record = self
    record.layouts = try layouts.enumerated().map { position, layout in
      position == current ? schema : try layout.relabelled(names, clearOf: taken, entity: schema.name)
    }
    return record
  }
}

extension EntitySchema {
  /// This older layout with its fields renamed by `names`, named `entity`; a field `names`
  /// does not rename is kept, or renamed out of the way when its name is in `taken`.
  fileprivate func relabelled(_ names: [String: String], clearOf taken: Set<String>, entity: String) throws
    -> EntitySchema
  {
    var renamed: [String: String] = [:]
    var used: Set<String> = []
    for field in fields {
      if let new = names[field.name] {
        renamed[field.name] = new
        used.insert(new)
      }
    }
    for field in fields where names[field.name] == nil {
      var candidate = field.name
      var attempt = 1
      while taken.contains(candidate) || used.contains(candidate) {
        candidate = "\(field.name)~dropped" + (attempt == 1 ? "" : "\(attempt)")
        attempt += 1
      }
      renamed[field.name] = candidate
      used.insert(candidate)
    }
    let fields = self.fields.map { field in
      var field = field
      field.name = renamed[field.name] ?? field.name
      return field
    }
    return try EntitySchema(
      name: entity, fields: fields, idField: renamed[idField.name] ?? idField.name,
      indexes: indexes.map { $0.renamingFields { renamed[$0] ?? $0 } })
  }
}
