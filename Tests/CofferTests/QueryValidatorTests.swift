@_spi(Backend) import Coffer
import Foundation
import Testing

@Suite struct QueryValidatorTests {
  let schema = try! EntitySchema(
    name: "Item",
    fields: [
      Field("id", .int), Field("price", .double), Field("name", .string),
      Field("meta", .document, isOptional: true),
    ],
    idField: "id")

  func code(_ filter: Filter) -> CofferError.Code? {
    do {
      _ = try QueryValidator.validate(filter, schema: schema)
      return nil
    } catch {
      return (error as? CofferError)?.code
    }
  }

  @Test func unknownFieldNamesTheFieldAndListsTheKnownOnes() {
    #expect {
      _ = try QueryValidator.validate(FieldRef("prize") > 3, schema: schema)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .invalidQuery && error?.field == "prize"
        && error?.message.contains("id, price, name, meta") == true
    }
  }

  @Test func nestedAndOrOfTheSameKindAreFlattened() throws {
    let a = FieldRef("name") == "a"
    let b = FieldRef("name") == "b"
    let c = FieldRef("id") == 3
    let filter = try QueryValidator.validate(
      .and([.and([a, .and([b])]), .or([.or([a, b]), c])]), schema: schema)
    #expect(filter == .and([a, b, .or([a, b, c])]))
  }

  @Test func filtersDeeperThanTheLimitAreRejected() {
    func nested(_ depth: Int) -> Filter {
      (0..<depth).reduce(FieldRef("id") == 1) { inner, level in
        level.isMultiple(of: 2) ? .not(inner) : .or([FieldRef("id") == 2, inner])
      }
    }
    #expect(code(nested(QueryValidator.maximumFilterDepth)) == nil)
    #expect(code(nested(QueryValidator.maximumFilterDepth + 1)) == .invalidQuery)
    #expect(code(nested(2_000)) == .invalidQuery)
  }

  @Test func integerLiteralsAgainstDoubleFieldsBecomeDoubles() throws {
    let filter = try QueryValidator.validate(FieldRef("price") > 3, schema: schema)
    #expect(filter == .compare(field: "price", op: .greater, value: .double(3)))
  }

  @Test func invalidComparisonsAreRejected() {
    #expect(code(FieldRef("name") > 3) == .invalidQuery)
    #expect(code(FieldRef("price") < Double.nan) == .invalidQuery)
    #expect(code(FieldRef("price").contains("1")) == .invalidQuery)
    #expect(code(.compare(field: "name", op: .less, value: .null)) == .invalidQuery)
    #expect(code(FieldRef("meta") > Value.document(Data())) == .invalidQuery)
    #expect(code(FieldRef("meta") == nil) == nil)
  }

  @Test func negativeLimitOffsetAndDocumentSortAreRejected() {
    #expect(throws: CofferError.self) {
      try QueryValidator.validate(Query(entity: "Item", limit: -1), schema: schema)
    }
    #expect(throws: CofferError.self) {
      try QueryValidator.validate(Query(entity: "Item", offset: -1), schema: schema)
    }
    #expect(throws: CofferError.self) {
      try QueryValidator.validate(Query(entity: "Item", sort: [Sort("meta")]), schema: schema)
    }
  }

  /// Checking a row copies it only to round a date: one whose dates are at the microsecond
  /// comes back in the same storage.
  @Test func onlyADateToRoundMakesTheCheckedRowACopy() throws {
    let events = try EntitySchema(
      name: "Event", fields: [Field("id", .int), Field("at", .date)], idField: "id")
    let moment = Date(timeIntervalSince1970: 1_700_000_000.123_456_789)
    func storage(_ row: Row) -> UnsafeRawPointer? {
      row.values.withUnsafeBufferPointer { $0.baseAddress.map(UnsafeRawPointer.init) }
    }

    let rounded = Row([1, .date(Value.normalized(moment))])
    let kept = try QueryValidator.validate(rounded, schema: events)
    #expect(storage(kept) == storage(rounded))

    let fine = Row([1, .date(moment)])
    let checked = try QueryValidator.validate(fine, schema: events)
    #expect(storage(checked) != storage(fine))
    guard case .date(let stored) = checked[1] else {
      Issue.record("the checked row holds no date")
      return
    }
    #expect(stored.timeIntervalSinceReferenceDate == Value.normalized(moment).timeIntervalSinceReferenceDate)
  }

  @Test func rowsWithNaNWrongKindsOrMissingRequiredValuesAreRejected() {
    #expect(throws: CofferError.self) {
      try QueryValidator.validate(Row([1, .double(.nan), "a", nil]), schema: schema)
    }
    #expect(throws: CofferError.self) {
      try QueryValidator.validate(Row([1, "1.0", "a", nil]), schema: schema)
    }
    #expect(throws: CofferError.self) {
      try QueryValidator.validate(Row([1, nil, "a", nil]), schema: schema)
    }
    #expect(throws: CofferError.self) { try QueryValidator.validate(Row([1, 1.0]), schema: schema) }
  }
}

@Suite struct CofferErrorTests {
  @Test func catchClausesCanNameACode() async {
    var caught = false
    do {
      throw CofferError(.duplicateID, "dup", entity: "Note", id: "1")
    } catch CofferError.Code.duplicateID {
      caught = true
    } catch {}
    #expect(caught)
  }

  @Test func descriptionCarriesCodeMessageAndContext() {
    let error = CofferError(
      .notFound, "No such note.", store: "memory:x", entity: "Note", id: "7", field: "title")
    #expect(
      error.description == "notFound: No such note. [store: memory:x, entity: Note, id: 7, field: title]")
  }
}
