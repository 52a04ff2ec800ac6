@_spi(Backend) import Coffer
import Foundation
import Logging

/// Text that stands for a stored value: it must never reach a log line.
private let logged = "L0GG3D-9a2e"

extension ConformanceSuite {
  static let loggingChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "logging.never-logs-values",
      "A store given a Logger logs what it does (batches at trace, with the store's name) and never a stored "
        + "value: writes, failed writes, reads and a close with values holding a marker log no line containing it."
    ) { context in
      let store = try await context.store()
      try await store.insert([Account(id: 1, email: logged + "@a", name: logged + " A")])
      try await store.update(Account(id: 1, email: logged + "@b", name: logged + " B"))
      try await store.upsert(Account(id: 2, email: logged + "@c", name: logged))
      do {
        try await store.insert(Account(id: 3, email: logged + "@c", name: logged))
      } catch let error as CofferError where error.code == .uniqueViolation {
        // Expected: the failure is logged too, by its code.
      }
      _ = try await store.query(Account.self).filter(FieldRef("email") == logged + "@b").fetch()
      _ = try await store.query(Account.self).filter(FieldRef("name").hasPrefix(logged)).count()
      _ = try await store.get(Account.self, id: 1)
      try await store.delete(Account.self, id: 2)
      try await store.close()
      let lines = context.log.lines
      let batches = lines.filter { $0.level == .trace && $0.message == "Applied a batch" }
      try expect(batches.count >= 4, "only \(batches.count) applied batches were logged at trace")
      try expect(
        lines.contains { $0.level == .debug && $0.message == "A batch was not applied" },
        "the failed insert was not logged")
      for line in lines {
        try expect(line.metadata["coffer.store"] != nil, "a line without the store's name: \(line.text)")
        try expect(!line.text.contains(logged), "a log line shows a stored value: \(line.text)")
      }
    }
  ]
}
