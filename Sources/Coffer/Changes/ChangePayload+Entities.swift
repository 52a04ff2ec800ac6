extension ChangePayload {
  /// The names of the entities a recorded batch changed, read from the head of its record
  /// without decoding its rows.
  ///
  /// - Throws: ``CofferError/Code/corruptStore`` naming the batch when the head is damaged.
  static func entities(_ bytes: [UInt8], store: String?, sequence: UInt64) throws -> [String] {
    var reader = Reader(bytes: bytes)
    do {
      guard try reader.byte() == version else { throw Reader.Damaged() }
      var names: [String] = []
      for _ in 0..<(try reader.count()) {
        names.append(try reader.string())
        for _ in 0..<(try reader.count()) { _ = try reader.slice() }
      }
      return names
    } catch {
      throw CofferError(
        .corruptStore,
        "Batch \(ChangePosition(sequence: sequence)) of the change feed is damaged and cannot be read. "
          + "Trim the feed past it, and copy the whole store to any replica that still needs it.",
        store: store)
    }
  }
}

extension RecordedChanges {
  /// The names of the entities the batch changed, without decoding its rows.
  func entities(store: String?) throws -> [String] {
    try ChangePayload.entities(payload, store: store, sequence: sequence)
  }
}
