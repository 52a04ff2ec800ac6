@_spi(Backend) import Coffer
import Foundation

/// The change feed's bounds: `{"bounds":{"trimmedThrough":0,"last":7}}`, or `{"bounds":null}`
/// when the store records no feed.
package struct WireBounds: Codable, Sendable, Hashable {
  /// The bounds.
  package struct Bounds: Codable, Sendable, Hashable {
    /// Batches through this sequence are trimmed.
    package var trimmedThrough: UInt64
    /// The last recorded sequence.
    package var last: UInt64
  }

  /// The bounds, or `nil` when the feed is off.
  package var bounds: Bounds?

  /// Bounds from the backend's.
  package init(_ bounds: ChangeFeedBounds?) {
    self.bounds = bounds.map { Bounds(trimmedThrough: $0.trimmedThrough, last: $0.last) }
  }

  /// The backend's bounds.
  package var feedBounds: ChangeFeedBounds? {
    bounds.map { ChangeFeedBounds(trimmedThrough: $0.trimmedThrough, last: $0.last) }
  }
}

/// One row change of a committed batch.
package struct WireRowChange: Codable, Sendable, Hashable {
  /// The entity.
  package var entity: String
  /// The row's id.
  package var id: Value
  /// insert, update or delete.
  package var kind: RowChange.Kind
  /// The fields the values are of (empty for a delete).
  package var fields: [String]
  /// The values, one per field.
  package var values: [Value]

  /// The wire form of a row change.
  package init(_ change: RowChange) {
    entity = change.entity
    id = change.id
    kind = change.kind
    fields = change.fields
    values = change.values
  }

  /// The row change.
  package var rowChange: RowChange {
    RowChange(entity: entity, id: id, kind: kind, fields: fields, values: values)
  }
}

/// One recorded batch of the feed: its sequence, commit time, the backend's payload bytes
/// (base64, exactly as recorded) and the same changes decoded.
package struct WireRecordedBatch: Codable, Sendable, Hashable {
  /// The sequence (a position is `c1.` and this).
  package var sequence: UInt64
  /// When it committed, in microseconds since 1970.
  package var committedAt: Int64
  /// The recorded payload.
  package var payload: [UInt8]
  /// The changes, decoded.
  package var changes: [WireRowChange]

  private enum CodingKeys: String, CodingKey { case sequence, committedAt, payload, changes }

  /// A batch.
  package init(sequence: UInt64, committedAt: Int64, payload: [UInt8], changes: [WireRowChange]) {
    self.sequence = sequence
    self.committedAt = committedAt
    self.payload = payload
    self.changes = changes
  }

  /// Decodes a batch; the payload is base64.
  package init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    sequence = try container.decode(UInt64.self, forKey: .sequence)
    committedAt = try container.decode(Int64.self, forKey: .committedAt)
    payload = [UInt8](try container.decode(Data.self, forKey: .payload))
    changes = try container.decode([WireRowChange].self, forKey: .changes)
  }

  /// Encodes the batch; the payload as base64.
  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(sequence, forKey: .sequence)
    try container.encode(committedAt, forKey: .committedAt)
    try container.encode(Data(payload), forKey: .payload)
    try container.encode(changes, forKey: .changes)
  }

  /// The backend's form.
  package var recorded: RecordedChanges {
    RecordedChanges(sequence: sequence, committedAt: committedAt, payload: payload)
  }
}

/// Batches of the feed after a sequence: `GET …/v1/changes?after=N&limit=L`.
package struct WireChangeBatches: Codable, Sendable, Hashable {
  /// The batches, in order.
  package var batches: [WireRecordedBatch]

  /// Batches.
  package init(batches: [WireRecordedBatch]) { self.batches = batches }
}

/// Whether the feed holds a batch after the sequence waited for.
package struct WireReady: Codable, Sendable, Hashable {
  /// True when it does.
  package var ready: Bool

  /// An answer.
  package init(ready: Bool) { self.ready = ready }
}

/// One event of the change stream (its `data:` line).
package struct WireStreamBatch: Codable, Sendable, Hashable {
  /// The sequence.
  package var sequence: UInt64
  /// The position, `c1.N`.
  package var position: String
  /// When it committed, in microseconds since 1970.
  package var committedAt: Int64
  /// The changes.
  package var changes: [WireRowChange]

  /// An event's batch.
  package init(sequence: UInt64, committedAt: Int64, changes: [WireRowChange]) {
    self.sequence = sequence
    self.position = ChangePosition(sequence: sequence).description
    self.committedAt = committedAt
    self.changes = changes
  }
}

/// How long the feed is kept: the text of the `changes` URL option (`all`, `1000`, `7d`).
package struct WireRetention: Codable, Sendable, Hashable {
  /// The retention text.
  package var retention: String

  /// A retention.
  package init(retention: String) { self.retention = retention }
}

/// What to trim: through a sequence, or batches committed before a time (µs since 1970).
package struct WireTrim: Codable, Sendable, Hashable {
  /// Trim batches through this sequence.
  package var through: UInt64?
  /// Trim batches committed before this time.
  package var committedBefore: Int64?

  /// A trim from the backend's.
  package init(_ trim: ChangeTrim) {
    switch trim {
    case .through(let sequence): through = sequence
    case .committedBefore(let micros): committedBefore = micros
    }
  }

  /// The backend's trim, or `nil` when the body names neither or both.
  package var trim: ChangeTrim? {
    switch (through, committedBefore) {
    case (let sequence?, nil): .through(sequence)
    case (nil, let micros?): .committedBefore(micros)
    default: nil
    }
  }
}
