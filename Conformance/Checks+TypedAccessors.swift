@_spi(Backend) import Coffer
import Foundation

extension ConformanceSuite {
  static let typedAccessorChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "read.typed-accessors-agree-with-values",
      "Each typed accessor of the fields a read hands over (int, double, bool, string, date, uuid) gives "
        + "the value value(at:) gives, or nil; never another value, never one of another kind, and nil "
        + "past the last field. Every kind, with extremes and nulls."
    ) { context in
      let store = try await context.store()
      try await store.prepare(schemas: EveryKindFixture.schemas)
      try await store.apply(EveryKindFixture.changeSet(extra: 20))
      for schema in EveryKindFixture.schemas {
        var rows = 0
        var typed = 0
        try await store.backend.read(Query(entity: schema.name, sort: [Sort(schema.idField.name)])) {
          fields in
          rows += 1
          typed += try checkAccessors(of: fields, in: schema, row: rows)
        }
        try expectEqual(
          rows, try await store.countRows(Query(entity: schema.name)), "\(schema.name): rows read")
        if schema.name == "Every" {
          // Not every accessor may decline: the fast paths are used for most scalars.
          try expect(typed > 0, "\(schema.name): no typed accessor answered for any field of \(rows) rows")
        }
      }
    }
  ]

  /// Checks every typed accessor of one row's fields against `value(at:)`; returns how many
  /// fields an accessor answered.
  private static func checkAccessors(of fields: any StoredFields, in schema: EntitySchema, row: Int) throws
    -> Int
  {
    func where_(_ position: Int) -> String {
      let name = position < schema.fields.count ? schema.fields[position].name : "past the end"
      return "\(schema.name) row \(row), field '\(name)'"
    }
    var answered = 0
    for position in 0...fields.count {
      let value: Value? = position < fields.count ? .some(try fields.value(at: position)) : .none
      try expectEqual(fields.isNull(at: position), value?.isNull ?? false, "\(where_(position)): isNull")
      func agree<T: Equatable>(_ accessor: String, _ got: T?, _ expected: T?) throws {
        guard let got else { return }
        answered += 1
        guard let expected, got == expected else {
          throw CheckFailure(
            "\(where_(position)): \(accessor) gave \(got) where value(at:) gives \(value.map { "\($0)" } ?? "nothing")"
          )
        }
      }
      var int: Int64?
      var bits: UInt64?
      var flag: Bool?
      var text: String?
      var date: Date?
      var uuid: UUID?
      switch value {
      case .int(let number): int = number
      case .double(let number): bits = number.bitPattern
      case .bool(let value): flag = value
      case .string(let value): text = value
      case .date(let value): date = value
      case .uuid(let value): uuid = value
      default: break
      }
      try agree("int(at:)", fields.int(at: position), int)
      try agree("double(at:)", fields.double(at: position)?.bitPattern, bits)
      try agree("bool(at:)", fields.bool(at: position), flag)
      try agree("string(at:)", fields.string(at: position), text)
      try agree("date(at:)", fields.date(at: position), date)
      try agree("uuid(at:)", fields.uuid(at: position), uuid)
    }
    return answered
  }
}
