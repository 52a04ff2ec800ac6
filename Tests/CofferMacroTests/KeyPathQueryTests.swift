@_spi(Backend) import Coffer
import CofferMacros
import CofferMemory
import Foundation
import Testing

/// A memory store holding notes 1…6 over threads 1 and 2, some read, one with a slug.
private func storeWithNotes() async throws -> Store {
  let store = Store(backend: MemoryBackend())
  var notes = (1...6).map { Note.sample(Int64($0), thread: $0 <= 4 ? 1 : 2, minutes: Double(7 - $0)) }
  notes[0].text = "Lunch at noon?"
  notes[1].text = "lunch is late"
  notes[2].readAt = notes[2].date
  notes[3].readAt = notes[3].date
  notes[4].slug = "plan"
  notes[5].mood = .busy
  try await store.insert(notes)
  return store
}

@Suite struct KeyPathQueries {
  @Test func filterAndSortByKeyPathsLikeTheFieldRefAPI() async throws {
    let store = try await storeWithNotes()
    let cutoff = Date(timeIntervalSince1970: 1_700_000_000 + 60 * 2)
    let page = try await store.query(Note.self).filter(\.threadID == 1 && \.date > cutoff)
      .sort(\.date, .descending).limit(2).fetch()
    let expected = try await store.query(Note.self)
      .filter(FieldRef("threadID") == Int64(1) && FieldRef("date") > cutoff)
      .sort([Sort("date", ascending: false)]).limit(2).fetch()
    #expect(page.map(\.id) == [1, 2])
    #expect(page == expected)
  }

  @Test func optionalFieldsFilterOnNilAndSortNullsFirst() async throws {
    let store = try await storeWithNotes()
    let unread = try await store.query(Note.self).filter(\.readAt == nil).fetch()
    #expect(unread.map(\.id) == [1, 2, 5, 6])
    let read = try await store.query(Note.self).filter(\.readAt != nil).sort(\.readAt).fetch()
    #expect(read.map(\.id) == [4, 3])
    let bySlug = try await store.query(Note.self).sort(\.slug, .descending).fetch()
    #expect(bySlug.first?.id == 5)
  }

  @Test func inMatchesAnyListedValue() async throws {
    let store = try await storeWithNotes()
    #expect(try await store.query(Note.self).filter(.isIn(\.id, [2, 5, 99])).fetch().map(\.id) == [2, 5])
    #expect(try await store.query(Note.self).filter(.isIn(\.threadID, [])).count() == 0)
  }

  @Test func stringMatchesAreCaseSensitive() async throws {
    let store = try await storeWithNotes()
    #expect(try await store.query(Note.self).filter(.contains(\.text, "unch")).count() == 2)
    #expect(try await store.query(Note.self).filter(.hasPrefix(\.text, "Lunch")).fetch().map(\.id) == [1])
    #expect(try await store.query(Note.self).filter(.hasSuffix(\.text, "late")).fetch().map(\.id) == [2])
    #expect(try await store.query(Note.self).filter(.hasPrefix(\.slug, "pl")).fetch().map(\.id) == [5])
  }

  @Test func negationAndDisjunctionCombine() async throws {
    let store = try await storeWithNotes()
    let ids = try await store.query(Note.self).filter(!(\.threadID == 1) || \.readAt != nil).fetch()
    #expect(ids.map(\.id) == [3, 4, 5, 6])
  }

  @Test func enumsThatAreValueConvertibleCompareByRawValue() async throws {
    let store = try await storeWithNotes()
    #expect(try await store.query(Note.self).filter(\.mood == .busy).fetch().map(\.id) == [6])
  }

  @Test func aKeyPathToANonStoredPropertyFailsWhenTheQueryRuns() async throws {
    let store = try await storeWithNotes()
    let error = await #expect(throws: CofferError.self) {
      try await store.query(Note.self).filter(\.preview == "x").fetch()
    }
    #expect(error?.code == .invalidQuery)
    #expect(error?.entity == "Note")
    #expect(error?.message.contains("does not name a stored field") == true)
    await #expect(throws: CofferError.self) { try await store.query(Note.self).sort(\.isSelected).count() }
  }

  @Test func everyWayToRunAQueryRejectsAKeyPathToANonStoredProperty() async throws {
    let store = try await storeWithNotes()
    let query = store.query(Note.self).filter(\.preview == "x")
    func rejects(_ what: String, _ run: () async throws -> Void) async {
      do {
        try await run()
        Issue.record("\(what) ran a query whose key path reads no stored field")
      } catch let error as CofferError {
        #expect(error.code == .invalidQuery, "\(what)")
      } catch {
        Issue.record("\(what) threw \(error)")
      }
    }
    await rejects("fetch") { _ = try await query.fetch() }
    await rejects("first") { _ = try await query.first() }
    await rejects("count") { _ = try await query.count() }
    await rejects("delete") { _ = try await query.delete() }
    await rejects("stream") { for try await _ in query.stream(pageSize: 2) {} }
    await rejects("observe") {
      var results = query.observe().makeAsyncIterator()
      _ = try await results.next()
    }
    #expect(try await store.query(Note.self).count() == 6)
  }

  @Test func keyPathsMapToStoredNames() {
    #expect(Note.storedFieldName(for: \Note.text) == "body")
    #expect(Note.storedFieldName(for: \Note.isSelected) == nil)
    #expect(Person.storedFieldName(for: \Person.id) == "personID")
  }
}
