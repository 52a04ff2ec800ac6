extension PlistBackend {
  /// The file format of a store: binary (compact, fast) or XML (readable, diffable).
  public enum Format: String, Sendable, Hashable, CaseIterable {
    /// `bplist00`.
    case binary
    /// XML property list 1.0.
    case xml
  }

  /// When applied changes reach the file.
  public enum Persistence: Sendable, Hashable {
    /// Every successful ``PlistBackend/apply(_:)`` is on disk before it returns (the default).
    case immediate
    /// The file is written once this many operations have been applied since the last write.
    case everyChanges(Int)
    /// The file is written in the background this long after the first unsaved change.
    case interval(Duration)
    /// The file is written only by ``PlistBackend/persist()`` and ``PlistBackend/close()``.
    case manual
  }

  /// How a property-list store is written.
  ///
  /// Whatever the policy, the file on disk is always a complete, valid store: it is replaced
  /// atomically, never edited in place.
  public struct Configuration: Sendable, Hashable {
    /// The format to write. `nil` keeps the format of an existing file and writes binary for a
    /// new one; a format that differs from the file's converts the file on the next write.
    public var format: Format?
    /// When changes are written.
    public var persistence: Persistence

    /// A configuration; by default binary for new files, every change durable.
    public init(format: Format? = nil, persistence: Persistence = .immediate) {
      self.format = format
      self.persistence = persistence
    }
  }
}
