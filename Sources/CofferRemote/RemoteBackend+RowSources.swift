@_spi(Backend) import Coffer
import CofferWire
import Foundation

extension RemoteBackend {
  /// A batch whose bulk inserts' rows are all made, ready to be written as one request body; or,
  /// when a row source fails, the batch as far as it got and the source's error.
  struct MadeBatch {
    var changes: ChangeSet
    /// The error a row source threw, and the id of a row the server surely does not store, which
    /// the last operation of ``changes`` updates so that the batch fails after every row made
    /// before that error was checked.
    var sourceFailure: (error: any Error, sentinel: Value)?
  }

  /// Makes every row of the batch's bulk inserts. A local backend asks a ``RowSource`` for each
  /// row as it writes it, so an error the server would find in an earlier row (a duplicate id)
  /// comes first; to keep that order, a failing source cuts the batch at the failing row and
  /// ends it with an update of an id that is not stored, which fails on the server after every
  /// earlier row was checked — and then the source's own error is the batch's.
  ///
  /// - Throws: the source's error, when no earlier operation can fail first.
  static func make(_ changes: ChangeSet) throws -> MadeBatch {
    guard changes.operations.contains(where: { if case .insertMany = $0 { true } else { false } }) else {
      return MadeBatch(changes: changes)
    }
    var made = changes
    made.operations = []
    for operation in changes.operations {
      guard case .insertMany(let entity, let source) = operation else {
        made.operations.append(operation)
        continue
      }
      var rows: [Row] = []
      rows.reserveCapacity(source.count)
      for position in 0..<source.count {
        do {
          rows.append(try source.row(at: position))
        } catch {
          guard let layout = changes.layouts[entity], let template = rows.first,
            let sentinel = absentID(of: layout.idField.kind)
          else { throw error }
          var row = template
          row[layout.idPosition] = sentinel
          made.operations.append(.insertMany(entity: entity, rows: RowSource(rows)))
          made.operations.append(.update(entity: entity, row: row))
          return MadeBatch(changes: made, sourceFailure: (error, sentinel))
        }
      }
      made.operations.append(.insertMany(entity: entity, rows: RowSource(rows)))
    }
    return MadeBatch(changes: made)
  }

  /// An id of a kind that no store holds in practice: a fresh UUID, or a random 64-bit number.
  static func absentID(of kind: FieldKind) -> Value? {
    switch kind {
    case .uuid: .uuid(UUID())
    case .string: .string("coffer-absent-" + UUID().uuidString)
    case .int: .int(Int64.random(in: .min ... .max))
    default: nil
    }
  }
}
