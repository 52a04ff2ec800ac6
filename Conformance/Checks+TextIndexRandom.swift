@_spi(Backend) import Coffer
import Foundation

/// Changes a text-indexed entity at random — inserts, updates (of the text, to null, of another
/// field), deletes, deletes and updates by query, and batches that fail part way — and checks
/// random searches against the reference search between them.
func randomTextIndexCheck(_ context: CheckContext, seed: UInt64) async throws {
  var random = SplitMix64(seed: seed ^ 0x7E47_1DE8)
  func text() -> String? {
    if random.chance(6) { return nil }
    var text = ""
    for index in 0..<random.below(8) {
      if index > 0 { text += random.pick(searchSeparators) }
      text += random.pick(searchVocabulary)
    }
    return text
  }
  func query() -> String {
    let word = random.pick(searchVocabulary)
    switch random.below(6) {
    case 0: return String(word.prefix(1 + random.below(3))) + "*"
    case 1: return "\"\(word) \(random.pick(searchVocabulary))\""
    case 2: return "\(word) OR \(random.pick(searchVocabulary))"
    case 3: return "\(word) NOT \(random.pick(searchVocabulary))"
    default: return word
    }
  }
  var model: [Int64: String?] = [:]
  var nextID: Int64 = 1
  var initial: [IndexedCell] = []
  for _ in 0..<30 {
    let cell = IndexedCell(id: nextID, text: text(), double: 0)
    initial.append(cell)
    model[nextID] = .some(cell.text)
    nextID += 1
  }
  let store = try await context.store(with: initial)
  func rows() -> [(id: Int64, text: String?)] { model.map { ($0.key, $0.value) } }
  for step in 0..<60 {
    let ids = model.keys.sorted()
    switch random.below(8) {
    case 0, 1:
      let cell = IndexedCell(id: nextID, text: text(), double: 0)
      try await store.insert(cell)
      model[nextID] = .some(cell.text)
      nextID += 1
    case 2, 3:
      guard let id = ids.isEmpty ? nil : random.pick(ids) else { continue }
      let cell = IndexedCell(id: id, text: text(), double: Double(step))
      try await store.update(cell)
      model[id] = .some(cell.text)
    case 4:
      guard let id = ids.isEmpty ? nil : random.pick(ids) else { continue }
      _ = try await store.delete(IndexedCell.self, id: id)
      model[id] = nil
    case 5:
      let search = query()
      guard let parsed = SearchReference.parse(search) else { continue }
      let doomed = model.filter { SearchReference.matches(parsed, $0.value) }.count
      let removed = try await store.query(IndexedCell.self).filter(FieldRef("text").matches(search)).delete()
      try expectEqual(removed, doomed, "rows deleted where text matches \(search.debugDescription)")
      for (id, value) in model where SearchReference.matches(parsed, value) { model[id] = nil }
    case 6:
      let search = query()
      guard let parsed = SearchReference.parse(search) else { continue }
      let replacement = text()
      let changed = try await store.query(IndexedCell.self).filter(FieldRef("text").matches(search)).update([
        .set("text", to: replacement.map(Value.string) ?? .null)
      ])
      let expected = model.filter { SearchReference.matches(parsed, $0.value) }.keys
      try expectEqual(changed, expected.count, "rows updated where text matches \(search.debugDescription)")
      for id in expected { model[id] = .some(replacement) }
    default:
      // A batch whose last operation fails applies nothing: the text index keeps the rows before it.
      guard let id = ids.isEmpty ? nil : random.pick(ids) else { continue }
      func row(_ id: Int64) -> Row {
        Row([.int(id), text().map(Value.string) ?? .null, .null, .null, .null, .double(1), .null])
      }
      let changes = ChangeSet([
        .update(entity: "Cell", row: row(id)), .insert(entity: "Cell", row: row(nextID)),
        .delete(entity: "Cell", id: .int(ids[0])), .insert(entity: "Cell", row: row(id)),
      ])
      _ = try await expectThrows(.duplicateID, "a batch inserting a stored id") {
        try await store.apply(changes)
      }
    }
    if step % 3 == 0 {
      try await expectSameSearch(store, query(), rows())
    }
  }
  for _ in 0..<10 { try await expectSameSearch(store, query(), rows()) }
}
