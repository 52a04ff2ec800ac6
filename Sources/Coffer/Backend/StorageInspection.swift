/// What a backend says about its storage for the tools: ``StorageInspecting/describeStorage()``.
public struct StorageDescription: Sendable, Hashable, Codable {
  /// The version of the backend's storage format (`"2"`, a catalog's version), or `nil`.
  public var formatVersion: String?
  /// The bytes the store takes on disk or on its server, or `nil` when the backend cannot tell.
  public var bytesOnDisk: Int64?
  /// Further facts worth showing an operator, as name and value (`journal_mode`, `wal`), in
  /// the order to show them. Never a stored value or a secret.
  public var details: [Detail]

  /// One fact of ``details``.
  public struct Detail: Sendable, Hashable, Codable {
    /// What the fact is.
    public var name: String
    /// Its value, as text.
    public var value: String

    /// A fact.
    @_spi(Backend) public init(_ name: String, _ value: String) {
      self.name = name
      self.value = value
    }
  }

  /// A description; everything unknown by default.
  @_spi(Backend) public init(formatVersion: String? = nil, bytesOnDisk: Int64? = nil, details: [Detail] = [])
  {
    self.formatVersion = formatVersion
    self.bytesOnDisk = bytesOnDisk
    self.details = details
  }
}

/// One thing wrong in a store, found by `Store.verify()` or a backend's
/// ``StorageInspecting/checkStorage()``: where it is and what it is, in words a person can act on.
/// It names entities, fields and ids, never another stored value.
public struct IntegrityProblem: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The entity it concerns, or `nil` for the store as a whole.
  public var entity: String?
  /// The id of the row it concerns, or `nil`.
  public var id: Value?
  /// The field or index it concerns (`threadID`, `unique:email`), or `nil`.
  public var field: String?
  /// What is wrong.
  public var message: String

  /// A problem.
  @_spi(Backend) public init(entity: String? = nil, id: Value? = nil, field: String? = nil, _ message: String)
  {
    self.entity = entity
    self.id = id
    self.field = field
    self.message = message
  }

  /// `Message 7, threadID: …` — where, then what.
  public var description: String {
    var place: [String] = []
    if let entity { place.append(id.map { "\(entity) \($0)" } ?? entity) }
    if let field { place.append(field) }
    return place.isEmpty ? message : place.joined(separator: ", ") + ": " + message
  }
}
