extension InMemoryTables: TextIndexReading {
  /// Answers a search from the entity's text index on the field, if it has one.
  package func searchTextIndex(
    entity: String, field: String, query: TextQuery, ranking: Bool, matchingOnly: Bool
  )
    throws -> TextIndexAnswer?
  {
    guard let table = tables[entity], let position = table.schema.position(of: field),
      let index = table.textIndexes.first(where: { $0.position == position })
    else { return nil }
    return index.answer(query, ranking: ranking, matchingOnly: matchingOnly) { id in
      table.rows[id].flatMap { TextIndex.text($0[position]) }
    }
  }
}
