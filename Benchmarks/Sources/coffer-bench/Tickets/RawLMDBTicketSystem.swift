import Foundation
import RawLMDB

/// liblmdb called directly for the ticket workload: the physical limit for the LMDB backend.
/// One environment; a database of id (16 UUID bytes) → row bytes (``TicketRow``); the indexes
/// the `Ticket` type declares, built as LMDB allows: `key` → id (unique), and sorted-duplicate
/// databases of (projectID, status) → id and assignee → id (tickets with no assignee are not in
/// it). Every commit synced; one read transaction per call (a reset and renewed handle). Pages
/// read each candidate's `createdAt` in place and decode only the rows they return; the urgent
/// query, which no index covers, walks every row testing its fields in place.
final class RawLMDBTicketSystem: TicketSystem {
  let name = "raw C liblmdb"
  private var environment: OpaquePointer?
  private var rows: MDB_dbi = 0
  private var byKey: MDB_dbi = 0
  private var byProjectStatus: MDB_dbi = 0
  private var byAssignee: MDB_dbi = 0
  private var reader: OpaquePointer?
  private var path = ""

  func create(in folder: String) async throws {
    try await close()
    path = folder + "/raw-lmdb-tickets"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    try check(mdb_env_create(&environment), "mdb_env_create")
    try check(mdb_env_set_maxdbs(environment, 8), "mdb_env_set_maxdbs")
    try check(mdb_env_set_mapsize(environment, 16 << 30), "mdb_env_set_mapsize")
    try check(mdb_env_open(environment, path, UInt32(MDB_NOTLS), 0o644), "mdb_env_open")
    let duplicates = UInt32(MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED)
    try writing { transaction in
      try check(mdb_dbi_open(transaction, "Ticket", UInt32(MDB_CREATE), &rows), "mdb_dbi_open")
      try check(mdb_dbi_open(transaction, "Ticket.key", UInt32(MDB_CREATE), &byKey), "mdb_dbi_open")
      try check(
        mdb_dbi_open(transaction, "Ticket.projectID_status", duplicates, &byProjectStatus), "mdb_dbi_open")
      try check(mdb_dbi_open(transaction, "Ticket.assignee", duplicates, &byAssignee), "mdb_dbi_open")
    }
  }

  func insert(_ tickets: [Ticket]) async throws {
    try writing { transaction in
      var bytes: [UInt8] = []
      var projectStatus = ProjectStatusKey()
      for ticket in tickets {
        TicketRow.encode(ticket, into: &bytes)
        try withID(ticket.id) { id in
          try bytes.withUnsafeMutableBytes { bytes in
            var data = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
            try check(mdb_put(transaction, rows, &id, &data, UInt32(MDB_NOOVERWRITE)), "mdb_put")
          }
          try withText(ticket.key) { key in
            try check(mdb_put(transaction, byKey, &key, &id, UInt32(MDB_NOOVERWRITE)), "mdb_put")
          }
          try projectStatus.with(ticket.projectID, ticket.status) { key in
            try check(mdb_put(transaction, byProjectStatus, &key, &id, 0), "mdb_put")
          }
          if let assignee = ticket.assignee {
            try withID(assignee) { key in
              try check(mdb_put(transaction, byAssignee, &key, &id, 0), "mdb_put")
            }
          }
        }
      }
    }
  }

  func get(_ id: UUID) async throws -> Ticket? {
    try reading { transaction in
      try withID(id) { key in
        var data = MDB_val()
        let status = mdb_get(transaction, rows, &key, &data)
        if status == MDB_NOTFOUND { return nil }
        try check(status, "mdb_get")
        return TicketRow.decode(id: id.uuid, data)
      }
    }
  }

  func ticket(key: String) async throws -> Ticket? {
    try reading { transaction in
      try withText(key) { key in
        var id = MDB_val()
        let status = mdb_get(transaction, byKey, &key, &id)
        if status == MDB_NOTFOUND { return nil }
        try check(status, "mdb_get")
        var data = MDB_val()
        try check(mdb_get(transaction, rows, &id, &data), "mdb_get")
        return TicketRow.decode(id: Self.uuid(id), data)
      }
    }
  }

  func projectPage(_ project: UUID, status: Int64) async throws -> [Ticket] {
    try reading { transaction in
      var cursor: OpaquePointer?
      try check(mdb_cursor_open(transaction, byProjectStatus, &cursor), "mdb_cursor_open")
      defer { mdb_cursor_close(cursor) }
      var newest = Newest(limit: 50)
      var projectStatus = ProjectStatusKey()
      try projectStatus.with(project, status) { key in
        var id = MDB_val()
        var found = mdb_cursor_get(cursor, &key, &id, MDB_SET)
        while found == 0 {
          var data = MDB_val()
          try check(mdb_get(transaction, rows, &id, &data), "mdb_get")
          newest.add(Candidate(id: Self.uuid(id), row: data))
          found = mdb_cursor_get(cursor, &key, &id, MDB_NEXT_DUP)
        }
        if found != MDB_NOTFOUND { try check(found, "mdb_cursor_get") }
      }
      return newest.result().map { TicketRow.decode(id: $0.id, $0.row) }
    }
  }

  func urgent() async throws -> [Ticket] {
    try reading { transaction in
      var cursor: OpaquePointer?
      try check(mdb_cursor_open(transaction, rows, &cursor), "mdb_cursor_open")
      defer { mdb_cursor_close(cursor) }
      var newest = Newest(limit: 100)
      var key = MDB_val()
      var data = MDB_val()
      var status = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
      while status == 0 {
        if TicketRow.priority(data) == 3, let estimate = TicketRow.estimate(data), estimate > 20 {
          newest.add(Candidate(id: Self.uuid(key), row: data))
        }
        status = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
      }
      if status != MDB_NOTFOUND { try check(status, "mdb_cursor_get") }
      return newest.result().map { TicketRow.decode(id: $0.id, $0.row) }
    }
  }

  func assignedCount(_ person: UUID) async throws -> Int {
    try reading { transaction in
      var cursor: OpaquePointer?
      try check(mdb_cursor_open(transaction, byAssignee, &cursor), "mdb_cursor_open")
      defer { mdb_cursor_close(cursor) }
      return try withID(person) { key in
        var id = MDB_val()
        let status = mdb_cursor_get(cursor, &key, &id, MDB_SET)
        if status == MDB_NOTFOUND { return 0 }
        try check(status, "mdb_cursor_get")
        var count = 0
        try check(mdb_cursor_count(cursor, &count), "mdb_cursor_count")
        return count
      }
    }
  }

  /// Walks the (projectID, status) index from the project's lowest status up to the closed
  /// one, adding the estimates in index order (status, then id).
  func openEstimate(_ project: UUID) async throws -> Double {
    try reading { transaction in
      var cursor: OpaquePointer?
      try check(mdb_cursor_open(transaction, byProjectStatus, &cursor), "mdb_cursor_open")
      defer { mdb_cursor_close(cursor) }
      var sum = 0.0
      var projectStatus = ProjectStatusKey()
      let wanted = IDWords(project.uuid)
      try projectStatus.with(project, .min) { key in
        var id = MDB_val()
        var found = mdb_cursor_get(cursor, &key, &id, MDB_SET_RANGE)
        while found == 0, IDWords(key) == wanted, ProjectStatusKey.status(key) < TicketWorkload.closed {
          var data = MDB_val()
          try check(mdb_get(transaction, rows, &id, &data), "mdb_get")
          if let estimate = TicketRow.estimate(data) { sum += estimate }
          found = mdb_cursor_get(cursor, &key, &id, MDB_NEXT)
        }
        if found != 0 && found != MDB_NOTFOUND { try check(found, "mdb_cursor_get") }
      }
      return sum
    }
  }

  func scan() async throws -> [Ticket] {
    try reading { transaction in
      var all: [Ticket] = []
      try RawLMDBTransactions.walk(rows, in: transaction) { key, data in
        all.append(TicketRow.decode(id: Self.uuid(key), data))
      }
      return all
    }
  }

  /// Rewrites each row with its status and closing time changed in a copy of its bytes, and
  /// moves its (projectID, status) entry when the status changes; a missing ticket is skipped.
  func close(_ tickets: [Ticket], at date: Date) async throws {
    let closedAt = TicketWorkload.microseconds(date)
    try writing { transaction in
      var bytes: [UInt8] = []
      var projectStatus = ProjectStatusKey()
      for ticket in tickets {
        try withID(ticket.id) { id in
          var data = MDB_val()
          let found = mdb_get(transaction, rows, &id, &data)
          if found == MDB_NOTFOUND { return }
          try check(found, "mdb_get")
          let old = UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size)
          bytes.removeAll(keepingCapacity: true)
          bytes.append(contentsOf: old)
          let project = UUID(uuid: old.loadUnaligned(as: uuid_t.self))
          let previous = TicketRow.status(data)
          TicketRow.close(&bytes, at: closedAt)
          try bytes.withUnsafeMutableBytes { bytes in
            var data = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
            try check(mdb_put(transaction, rows, &id, &data, 0), "mdb_put")
          }
          guard previous != TicketWorkload.closed else { return }
          try projectStatus.with(project, previous) { key in
            try check(mdb_del(transaction, byProjectStatus, &key, &id), "mdb_del")
          }
          try projectStatus.with(project, TicketWorkload.closed) { key in
            try check(mdb_put(transaction, byProjectStatus, &key, &id, 0), "mdb_put")
          }
        }
      }
    }
  }

  /// Reads the ids under (project, closed), removes each row with its key and assignee
  /// entries, then the ids' (projectID, status) entries all at once.
  func deleteClosed(of project: UUID) async throws -> Int {
    try writing { transaction in
      var cursor: OpaquePointer?
      try check(mdb_cursor_open(transaction, byProjectStatus, &cursor), "mdb_cursor_open")
      defer { mdb_cursor_close(cursor) }
      var projectStatus = ProjectStatusKey()
      var ids: [uuid_t] = []
      try projectStatus.with(project, TicketWorkload.closed) { key in
        var id = MDB_val()
        var found = mdb_cursor_get(cursor, &key, &id, MDB_SET)
        while found == 0 {
          ids.append(Self.uuid(id))
          found = mdb_cursor_get(cursor, &key, &id, MDB_NEXT_DUP)
        }
        if found != MDB_NOTFOUND { try check(found, "mdb_cursor_get") }
      }
      guard !ids.isEmpty else { return 0 }
      for ticket in ids {
        try withID(UUID(uuid: ticket)) { id in
          var data = MDB_val()
          try check(mdb_get(transaction, rows, &id, &data), "mdb_get")
          var textKey = TicketRow.key(data)
          try textKey.withUnsafeMutableBytes { bytes in
            var key = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
            try check(mdb_del(transaction, byKey, &key, nil), "mdb_del")
          }
          if let assignee = TicketRow.assignee(data) {
            try withID(assignee) { key in
              try check(mdb_del(transaction, byAssignee, &key, &id), "mdb_del")
            }
          }
          try check(mdb_del(transaction, rows, &id, nil), "mdb_del")
        }
      }
      try projectStatus.with(project, TicketWorkload.closed) { key in
        try check(mdb_del(transaction, byProjectStatus, &key, nil), "mdb_del")
      }
      return ids.count
    }
  }

  func fileSize() -> Int64 { diskUsage(path) }

  func close() async throws {
    if let reader { mdb_txn_abort(reader) }
    reader = nil
    if let environment { mdb_env_close(environment) }
    environment = nil
  }

  // MARK: - Plumbing

  private func writing<T>(_ body: (OpaquePointer?) throws -> T) throws -> T {
    try RawLMDBTransactions.writing(in: environment, body)
  }

  private func reading<T>(_ body: (OpaquePointer?) throws -> T) throws -> T {
    try RawLMDBTransactions.reading(in: environment, with: &reader, body)
  }

  private func check(_ status: Int32, _ call: String) throws {
    guard status == 0 else { throw BenchError("\(name): \(call): \(String(cString: mdb_strerror(status)))") }
  }

  /// A UUID's 16 bytes as a value.
  private func withID<T>(_ id: UUID, _ body: (inout MDB_val) throws -> T) rethrows -> T {
    var bytes = id.uuid
    return try withUnsafeMutableBytes(of: &bytes) { bytes in
      var value = MDB_val(mv_size: 16, mv_data: bytes.baseAddress)
      return try body(&value)
    }
  }

  /// A string's UTF-8 bytes as a value.
  private func withText<T>(_ text: String, _ body: (inout MDB_val) throws -> T) rethrows -> T {
    var text = text
    return try text.withUTF8 { bytes in
      var value = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
      return try body(&value)
    }
  }

  /// The 16 bytes a value starts with, as a UUID's.
  private static func uuid(_ value: MDB_val) -> uuid_t {
    UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size).loadUnaligned(as: uuid_t.self)
  }
}

/// A UUID's bytes read as two big-endian words: comparing the words compares the bytes.
private struct IDWords: Comparable {
  var high: UInt64
  var low: UInt64

  init(_ id: uuid_t) {
    var id = id
    (high, low) = withUnsafeBytes(of: &id) { bytes in
      (
        UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
        UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
      )
    }
  }

  /// The first 16 bytes of a value.
  init(_ value: MDB_val) {
    let bytes = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
    high = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
    low = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
  }

  static func < (left: IDWords, right: IDWords) -> Bool {
    (left.high, left.low) < (right.high, right.low)
  }
}

/// The (projectID, status) index's 24-byte key: the project's UUID bytes, then the status
/// big-endian with its sign bit flipped, so byte order is (project, numeric status) order.
private struct ProjectStatusKey {
  private var bytes = [UInt8](repeating: 0, count: 24)

  mutating func with<T>(_ project: UUID, _ status: Int64, _ body: (inout MDB_val) throws -> T) rethrows -> T {
    try bytes.withUnsafeMutableBytes { bytes in
      withUnsafeBytes(of: project.uuid) { bytes.copyMemory(from: $0) }
      bytes.storeBytes(
        of: (UInt64(bitPattern: status) ^ (1 << 63)).bigEndian, toByteOffset: 16, as: UInt64.self)
      var value = MDB_val(mv_size: 24, mv_data: bytes.baseAddress)
      return try body(&value)
    }
  }

  /// The status in a key of this index.
  static func status(_ key: MDB_val) -> Int64 {
    let bytes = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
    let flipped = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
    return Int64(bitPattern: flipped ^ (1 << 63))
  }
}

/// A row that may be returned by a page: its id, its `createdAt` and its bytes, which stay
/// valid until the read transaction ends.
private struct Candidate {
  var id: uuid_t
  var order: IDWords
  var createdAt: Int64
  var row: MDB_val

  init(id: uuid_t, row: MDB_val) {
    self.id = id
    order = IDWords(id)
    createdAt = TicketRow.createdAt(row)
    self.row = row
  }

  /// Newest `createdAt` first, ties by id bytes.
  static func precedes(_ left: Candidate, _ right: Candidate) -> Bool {
    left.createdAt != right.createdAt ? left.createdAt > right.createdAt : left.order < right.order
  }
}

/// The first `limit` candidates in page order, kept while candidates arrive in any order:
/// the list is sorted and cut back to `limit` whenever it grows to eight times that, and a
/// candidate that comes after the last one kept then is dropped at once.
private struct Newest {
  let limit: Int
  private var kept: [Candidate] = []
  private var bound: Candidate?

  init(limit: Int) { self.limit = limit }

  mutating func add(_ candidate: Candidate) {
    if let bound, !Candidate.precedes(candidate, bound) { return }
    kept.append(candidate)
    if kept.count >= limit * 8 { trim() }
  }

  mutating func result() -> [Candidate] {
    trim()
    return kept
  }

  private mutating func trim() {
    kept.sort(by: Candidate.precedes)
    if kept.count > limit { kept.removeLast(kept.count - limit) }
    if kept.count == limit { bound = kept.last }
  }
}

/// A ticket's row bytes: the fixed-width fields at fixed offsets (project UUID, then status,
/// priority, `createdAt` and `closedAt` as little-endian Int64 microseconds, the estimate as a
/// little-endian Double's bits, the assignee UUID, a byte of flags for the optional fields),
/// then `key`, `title` and, when present, `body`, each a little-endian UInt32 length and its
/// UTF-8 bytes. An absent optional leaves zeros in its place.
private enum TicketRow {
  /// Where each field starts.
  enum At {
    static let status = 16
    static let priority = 24
    static let createdAt = 32
    static let closedAt = 40
    static let estimate = 48
    static let assignee = 56
    static let flags = 72
    static let texts = 73
  }

  static let hasAssignee: UInt8 = 1
  static let hasClosedAt: UInt8 = 2
  static let hasEstimate: UInt8 = 4
  static let hasBody: UInt8 = 8

  static func encode(_ ticket: Ticket, into bytes: inout [UInt8]) {
    bytes.removeAll(keepingCapacity: true)
    func append(_ number: UInt64) {
      withUnsafeBytes(of: number.littleEndian) { bytes.append(contentsOf: $0) }
    }
    func append(_ id: UUID?) {
      if let id {
        withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
      } else {
        bytes.append(contentsOf: repeatElement(0, count: 16))
      }
    }
    func append(_ text: String) {
      append32(UInt32(text.utf8.count))
      bytes.append(contentsOf: text.utf8)
    }
    func append32(_ number: UInt32) {
      withUnsafeBytes(of: number.littleEndian) { bytes.append(contentsOf: $0) }
    }
    append(ticket.projectID)
    append(UInt64(bitPattern: ticket.status))
    append(UInt64(bitPattern: ticket.priority))
    append(UInt64(bitPattern: TicketWorkload.microseconds(ticket.createdAt)))
    append(UInt64(bitPattern: ticket.closedAt.map(TicketWorkload.microseconds) ?? 0))
    append(ticket.estimate?.bitPattern ?? 0)
    append(ticket.assignee)
    var flags: UInt8 = 0
    if ticket.assignee != nil { flags |= hasAssignee }
    if ticket.closedAt != nil { flags |= hasClosedAt }
    if ticket.estimate != nil { flags |= hasEstimate }
    if ticket.body != nil { flags |= hasBody }
    bytes.append(flags)
    append(ticket.key)
    append(ticket.title)
    if let body = ticket.body { append(body) }
  }

  static func decode(id: uuid_t, _ value: MDB_val) -> Ticket {
    let raw = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
    let flags = raw[At.flags]
    var offset = At.texts
    func string() -> String {
      let count = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
      offset += 4
      defer { offset += count }
      return String(decoding: UnsafeRawBufferPointer(rebasing: raw[offset..<offset + count]), as: UTF8.self)
    }
    let key = string()
    let title = string()
    return Ticket(
      id: UUID(uuid: id), key: key, projectID: UUID(uuid: raw.loadUnaligned(as: uuid_t.self)),
      status: int64(raw, At.status), priority: int64(raw, At.priority),
      assignee: flags & hasAssignee == 0
        ? nil : UUID(uuid: raw.loadUnaligned(fromByteOffset: At.assignee, as: uuid_t.self)),
      title: title, body: flags & hasBody == 0 ? nil : string(),
      createdAt: TicketWorkload.date(int64(raw, At.createdAt)),
      closedAt: flags & hasClosedAt == 0 ? nil : TicketWorkload.date(int64(raw, At.closedAt)),
      estimate: flags & hasEstimate == 0
        ? nil : Double(bitPattern: UInt64(bitPattern: int64(raw, At.estimate))))
  }

  /// Sets the status to closed and the closing time, in place.
  static func close(_ bytes: inout [UInt8], at microseconds: Int64) {
    bytes.withUnsafeMutableBytes { raw in
      raw.storeBytes(of: TicketWorkload.closed.littleEndian, toByteOffset: At.status, as: Int64.self)
      raw.storeBytes(of: microseconds.littleEndian, toByteOffset: At.closedAt, as: Int64.self)
      raw[At.flags] |= hasClosedAt
    }
  }

  // Single fields, read in place.

  static func status(_ value: MDB_val) -> Int64 { int64(buffer(value), At.status) }
  static func priority(_ value: MDB_val) -> Int64 { int64(buffer(value), At.priority) }
  static func createdAt(_ value: MDB_val) -> Int64 { int64(buffer(value), At.createdAt) }

  static func estimate(_ value: MDB_val) -> Double? {
    let raw = buffer(value)
    guard raw[At.flags] & hasEstimate != 0 else { return nil }
    return Double(bitPattern: UInt64(bitPattern: int64(raw, At.estimate)))
  }

  static func assignee(_ value: MDB_val) -> UUID? {
    let raw = buffer(value)
    guard raw[At.flags] & hasAssignee != 0 else { return nil }
    return UUID(uuid: raw.loadUnaligned(fromByteOffset: At.assignee, as: uuid_t.self))
  }

  /// The `key` field's UTF-8 bytes.
  static func key(_ value: MDB_val) -> [UInt8] {
    let raw = buffer(value)
    let count = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: At.texts, as: UInt32.self)))
    return Array(raw[At.texts + 4..<At.texts + 4 + count])
  }

  private static func buffer(_ value: MDB_val) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
  }

  private static func int64(_ raw: UnsafeRawBufferPointer, _ offset: Int) -> Int64 {
    Int64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int64.self))
  }
}
