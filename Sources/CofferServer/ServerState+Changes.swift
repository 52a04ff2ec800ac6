@_spi(Backend) import Coffer
import CofferWire
import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle

extension ServerState {
  /// The store's change feed, or ``CofferError/Code/unsupported``.
  func recording(_ call: Call) throws -> any ChangeRecording {
    guard let recording = call.store.backend as? any ChangeRecording else {
      throw CofferError(.unsupported, "This store keeps no change feed.", store: call.storeName)
    }
    return recording
  }

  /// `GET …/v1/changes/bounds`.
  func changeBounds(_ call: Call) async throws -> Response {
    try json(WireBounds(try await recording(call).changeFeedBounds()))
  }

  /// A sequence from a query parameter or header: a plain number or a `c1.N` position.
  static func sequence(_ text: Substring?) throws -> UInt64 {
    guard let text else { return 0 }
    if let number = UInt64(text) { return number }
    if let position = ChangePosition(String(text)) { return position.sequence }
    throw CofferError(.invalidInput, "A change position is a number or c1.NUMBER.")
  }

  /// The batches after a sequence, as the API shows them: without the server's idempotency
  /// entity, and without batches that changed nothing else.
  func batches(after sequence: UInt64, limit: Int, _ call: Call) async throws -> [WireRecordedBatch] {
    let recorded = try await recording(call).readChanges(after: sequence, limit: limit)
    var batches: [WireRecordedBatch] = []
    batches.reserveCapacity(recorded.count)
    for batch in recorded {
      let changes = try batch.decoded(store: call.storeName).changes
      var payload = batch.payload
      var visible = changes
      if changes.contains(where: { $0.entity == IdempotencyMemory.entity }) {
        visible = changes.filter { $0.entity != IdempotencyMemory.entity }
        if visible.isEmpty { continue }
        payload = try Self.encode(visible)
      }
      if call.grant.entities != nil {
        let allowed = visible.filter { call.grant.allows(entity: $0.entity) }
        if allowed.count != visible.count {
          if allowed.isEmpty { continue }
          visible = allowed
          payload = try Self.encode(visible)
        }
      }
      batches.append(
        WireRecordedBatch(
          sequence: batch.sequence, committedAt: batch.committedAt, payload: payload,
          changes: visible.map(WireRowChange.init)))
    }
    return batches
  }

  /// Row changes in the feed's recorded form, through the collector backends record with.
  static func encode(_ changes: [RowChange]) throws -> [UInt8] {
    var collector = ChangeCollector()
    var schemas: [String: EntitySchema] = [:]
    for change in changes {
      let schema: EntitySchema
      if let known = schemas[change.entity] {
        schema = known
      } else {
        let fields = change.fields.isEmpty ? ["id"] : change.fields
        schema = try EntitySchema(
          name: change.entity, fields: fields.enumerated().map { Field($1, .string, isOptional: $0 > 0) },
          idField: fields[0])
        schemas[change.entity] = schema
      }
      switch change.kind {
      case .insert: collector.touched(change.id, in: schema, existed: false, now: Row(change.values))
      case .update: collector.touched(change.id, in: schema, existed: true, now: Row(change.values))
      case .delete: collector.touched(change.id, in: schema, existed: true, now: nil)
      }
    }
    return collector.encoded() ?? []
  }

  /// A query parameter's integer, its default when absent, refused outside its range.
  static func integer(_ text: Substring?, default value: Int, in range: ClosedRange<Int>, _ name: String)
    throws -> Int
  {
    guard let text else { return value }
    guard let number = Int(text), range.contains(number) else {
      throw CofferError(
        .invalidInput,
        "The \(name) parameter is a whole number from \(range.lowerBound) to \(range.upperBound).")
    }
    return number
  }

  /// `GET …/v1/changes?after=N&limit=L`.
  func changes(_ call: Call) async throws -> Response {
    let parameters = call.request.uri.queryParameters
    let after = try Self.sequence(parameters["after"])
    let limit = try Self.integer(parameters["limit"], default: 1000, in: 1...10_000, "limit")
    return try json(WireChangeBatches(batches: try await batches(after: after, limit: limit, call)))
  }

  /// `GET …/v1/changes/wait?after=N&timeoutMs=T`.
  func waitForChanges(_ call: Call) async throws -> Response {
    let parameters = call.request.uri.queryParameters
    let after = try Self.sequence(parameters["after"])
    let timeout = try Self.integer(parameters["timeoutMs"], default: 5000, in: 0...10_000, "timeoutMs")
    let recording = try recording(call)
    try await recording.waitForChanges(after: after, timeout: .milliseconds(timeout))
    let last = try await recording.changeFeedBounds()?.last ?? 0
    return try json(WireReady(ready: last > after))
  }

  /// `GET …/v1/changes/stream?after=N`: server-sent events, one per batch, until the client
  /// goes or the server shuts down.
  func changeStream(_ call: Call) async throws -> Response {
    let parameters = call.request.uri.queryParameters
    var after = try Self.sequence(parameters["after"])
    if let lastEventID = call.request.headers.first(where: { $0.name.canonicalName == "last-event-id" })?
      .value
    {
      after = max(after, try Self.sequence(Substring(lastEventID)))
    }
    let follow: Bool
    switch parameters["follow"] {
    case nil, "true": follow = true
    case "false": follow = false
    default: throw CofferError(.invalidInput, "The follow parameter is true or false.", store: call.storeName)
    }
    // Fail before the stream starts (after the request itself is checked): a feed that is off
    // or trimmed past the position.
    let recording = try recording(call)
    guard let bounds = try await recording.changeFeedBounds() else {
      throw CofferError.changeFeedOff(store: call.storeName)
    }
    if after < bounds.trimmedThrough {
      throw CofferError.changesTrimmed(
        after: after, trimmedThrough: bounds.trimmedThrough, store: call.storeName)
    }
    let start = after
    let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
    return Response(
      status: .ok, headers: headers,
      body: ResponseBody { writer in
        var position = start
        var quiet = ContinuousClock.now
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
          let batches = try await self.batches(after: position, limit: 256, call)
          if batches.isEmpty {
            if !follow { break }
            let last = try await recording.changeFeedBounds()?.last ?? position
            if last > position {
              position = last
              continue
            }
            try await recording.waitForChanges(after: position, timeout: .seconds(1))
            if ContinuousClock.now - quiet > .seconds(15) {
              try await writer.write(ByteBuffer(string: ": keepalive\n\n"))
              quiet = ContinuousClock.now
            }
            continue
          }
          var text = ""
          for batch in batches {
            let event = WireStreamBatch(
              sequence: batch.sequence, committedAt: batch.committedAt, changes: batch.changes)
            let data = try WireCoding.encoder().encode(event)
            text += "id: \(batch.sequence)\nevent: batch\ndata: "
            text += String(decoding: data, as: UTF8.self)
            text += "\n\n"
            position = batch.sequence
          }
          try await writer.write(ByteBuffer(string: text))
          quiet = ContinuousClock.now
        }
        try await writer.finish(nil)
      })
  }

  /// `POST …/v1/admin/changes/record`.
  func recordChanges(_ call: Call) async throws -> Response {
    let request = try decode(WireRetention.self, from: call.body)
    guard let retention = ChangeRetention(urlOption: request.retention) else {
      throw CofferError(
        .invalidInput, "A retention is all, a count of batches, or an age such as 7d, 12h, 30m or 90s.",
        store: call.storeName)
    }
    try await call.store.recordChanges(retention: retention)
    return try json(WireDone())
  }

  /// `POST …/v1/admin/changes/trim`.
  func trimChanges(_ call: Call) async throws -> Response {
    let request = try decode(WireTrim.self, from: call.body)
    guard let trim = request.trim else {
      throw CofferError(
        .invalidInput, "A trim names exactly one of through and committedBefore.", store: call.storeName)
    }
    if case .through(let sequence) = trim, sequence > UInt64(Int64.max) {
      throw CofferError(
        .invalidInput, "A trim's through is a sequence from 0 to \(Int64.max).", store: call.storeName)
    }
    try await recording(call).trimChanges(trim)
    return try json(WireDone())
  }
}
