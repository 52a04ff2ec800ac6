@_spi(Backend) import Coffer

/// What the reference models of the randomized reference check hold, by id: threads; messages
/// (cascade from threads), notes (nullify), pins (deny) and attachments (cascade from messages).
/// An independent reading of the delete rules, to compare a store with.
struct ReferenceOracle: Equatable {
  var threads: Set<Int64> = []
  var messages: [Int64: Int64] = [:]
  var notes: [Int64: Int64?] = [:]
  var pins: [Int64: Int64] = [:]
  var attachments: [Int64: Int64] = [:]

  /// Deletes threads by their rules; `false` (and no change) when a pin refers to one of them.
  mutating func deleteThreads(_ ids: Set<Int64>) -> Bool {
    if pins.values.contains(where: ids.contains) { return false }
    threads.subtract(ids)
    for (message, thread) in messages where ids.contains(thread) { deleteMessage(message) }
    for (note, thread) in notes {
      if let thread, ids.contains(thread) { notes[note] = .some(nil) }
    }
    return true
  }

  /// Deletes a message and its attachments.
  mutating func deleteMessage(_ id: Int64) {
    messages[id] = nil
    attachments = attachments.filter { $0.value != id }
  }

  /// What a store holds, read the same way.
  static func read(_ store: Store) async throws -> ReferenceOracle {
    var oracle = ReferenceOracle()
    oracle.threads = Set(try await store.all(RefThread.self).map(\.id))
    for message in try await store.all(RefMessage.self) { oracle.messages[message.id] = message.threadID }
    for note in try await store.all(RefNote.self) { oracle.notes[note.id] = .some(note.threadID) }
    for pin in try await store.all(RefPin.self) { oracle.pins[pin.id] = pin.threadID }
    for attachment in try await store.all(RefAttachment.self) {
      oracle.attachments[attachment.id] = attachment.messageID
    }
    return oracle
  }
}

extension ConformanceSuite {
  static let referenceRandomChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "references.randomized", requires: .preconditions,
      "Random inserts and deletes over entities with cascade, nullify and deny references succeed or fail, and "
        + "leave the rows, exactly as an independent model of the rules says (seed COFFER_CONFORMANCE_SEED)."
    ) { context in
      let store = try await context.store()
      try await store.prepare([
        RefThread.self, RefMessage.self, RefNote.self, RefPin.self, RefAttachment.self,
      ])
      var random = SplitMix64(seed: differentialSeed())
      var model = ReferenceOracle()
      var nextID: Int64 = 100
      for step in 0..<160 {
        nextID += 1
        let id = nextID
        let thread = Int64(1 + random.below(14))
        let (what, expected, body): (String, Bool, () async throws -> Void)
        switch random.below(10) {
        case 0, 1:
          what = "insert thread \(thread)"
          expected = !model.threads.contains(thread)
          body = { try await store.insert(RefThread(id: thread, title: "t")) }
          if expected { model.threads.insert(thread) }
        case 2, 3:
          what = "insert message \(id) of thread \(thread)"
          expected = model.threads.contains(thread)
          body = { try await store.insert(RefMessage(id: id, threadID: thread, text: "", read: false)) }
          if expected { model.messages[id] = thread }
        case 4:
          let target: Int64? = random.chance(30) ? nil : thread
          what = "insert note \(id) of thread \(target.map(String.init) ?? "nil")"
          expected = target.map(model.threads.contains) ?? true
          body = { try await store.insert(RefNote(id: id, threadID: target, text: "")) }
          if expected { model.notes[id] = .some(target) }
        case 5:
          what = "insert pin \(id) of thread \(thread)"
          expected = model.threads.contains(thread)
          body = { try await store.insert(RefPin(id: id, threadID: thread)) }
          if expected { model.pins[id] = thread }
        case 6:
          let message = model.messages.keys.sorted().last.map { random.chance(80) ? $0 : $0 + 1 } ?? 1
          what = "insert attachment \(id) of message \(message)"
          expected = model.messages[message] != nil
          body = { try await store.insert(RefAttachment(id: id, messageID: message)) }
          if expected { model.attachments[id] = message }
        case 7:
          what = "delete thread \(thread)"
          expected = model.deleteThreads([thread])
          body = { try await store.delete(RefThread.self, id: thread) }
        case 8:
          what = "delete threads \(thread)...\(thread + 2) by filter"
          expected = model.deleteThreads(Set(thread...(thread + 2)))
          body = {
            _ = try await store.query(RefThread.self).filter(\.id >= thread && \.id <= thread + 2).delete()
          }
        default:
          if let pin = model.pins.keys.sorted().first, random.chance(50) {
            what = "delete pin \(pin)"
            model.pins[pin] = nil
            body = { try await store.delete(RefPin.self, id: pin) }
          } else {
            let message = model.messages.keys.sorted().first ?? 1
            what = "delete message \(message)"
            model.deleteMessage(message)
            body = { try await store.delete(RefMessage.self, id: message) }
          }
          expected = true
        }
        do {
          try await body()
          try expect(expected, "step \(step), \(what): succeeded, but the model refuses it")
        } catch let error as CofferError where error.code == .referenceViolation || error.code == .duplicateID
        {
          try expect(
            !expected, "step \(step), \(what): failed with \(error.code), but the model allows it: \(error)")
        }
        if step % 20 == 19 {
          try expectEqual(
            try await ReferenceOracle.read(store), model, "the store after step \(step), \(what)")
        }
      }
      try expectEqual(try await ReferenceOracle.read(store), model, "the store at the end")
    }
  ]
}
