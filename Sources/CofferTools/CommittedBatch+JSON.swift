@_spi(Backend) import Coffer

extension CommittedBatch {
  /// The batch as one line of JSON (no line break), values in the forms of the export format
  /// (see <doc:Tools>): what `coffer changes` prints.
  ///
  /// ```
  /// {"position":"c1.7","committedAt":"2026-12-06T12:00:00.000000Z","changes":[
  ///   {"entity":"Note","id":1,"kind":"update","values":{"id":1,"title":"Milk"}}]}
  /// ```
  /// (shown on two lines here).
  public var jsonLine: String {
    var text = #"{"position":"\#(position)","committedAt":"#
    JSONLines.appendValue(.date(committedAt), to: &text)
    text += #","changes":["#
    for (index, change) in changes.enumerated() {
      if index > 0 { text += "," }
      text += #"{"entity":"#
      JSONLines.appendString(change.entity, to: &text)
      text += #","id":"#
      JSONLines.appendValue(change.id, to: &text)
      text += #","kind":"\#(change.kind.rawValue)""#
      if change.kind != .delete {
        text += #","values":{"#
        for (position, field) in change.fields.enumerated() where position < change.values.count {
          if position > 0 { text += "," }
          JSONLines.appendString(field, to: &text)
          text += ":"
          JSONLines.appendValue(change.values[position], to: &text)
        }
        text += "}"
      }
      text += "}"
    }
    return text + "]}"
  }
}
