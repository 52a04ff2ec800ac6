@_spi(Backend) import Coffer

/// What a conformance check needs of a backend to run: how the backend behaves
/// (``Coffer/BackendCapabilities``) and which optional abilities it adopts
/// (``Coffer/SnapshotReading``, ``Coffer/SchemaEditing``, ``Coffer/CachedMemoryReleasing``). A check whose requirements a
/// backend lacks is skipped and reported as skipped.
public struct CheckRequirements: OptionSet, Sendable, Hashable {
  /// The raw bits: a ``Coffer/BackendCapabilities``' own in the low bits, the abilities above.
  public let rawValue: Int
  /// Requirements from raw bits.
  public init(rawValue: Int) { self.rawValue = rawValue }

  private init(_ capabilities: BackendCapabilities) { self.rawValue = capabilities.rawValue }

  /// ``Coffer/BackendCapabilities/reopenable``.
  public static let reopenable = CheckRequirements(BackendCapabilities.reopenable)
  /// ``Coffer/BackendCapabilities/durable``.
  public static let durable = CheckRequirements(BackendCapabilities.durable)
  /// ``Coffer/BackendCapabilities/multiProcess``.
  public static let multiProcess = CheckRequirements(BackendCapabilities.multiProcess)
  /// ``Coffer/BackendCapabilities/crossEntityTransactions``.
  public static let crossEntityTransactions = CheckRequirements(BackendCapabilities.crossEntityTransactions)
  /// ``Coffer/BackendCapabilities/schemaEvolution``.
  public static let schemaEvolution = CheckRequirements(BackendCapabilities.schemaEvolution)
  /// ``Coffer/BackendCapabilities/preconditions``.
  public static let preconditions = CheckRequirements(BackendCapabilities.preconditions)
  /// ``Coffer/BackendCapabilities/observesOtherHandles``.
  public static let observesOtherHandles = CheckRequirements(BackendCapabilities.observesOtherHandles)
  /// The backend adopts ``Coffer/SnapshotReading``.
  public static let snapshots = CheckRequirements(rawValue: 1 << 24)
  /// The backend adopts ``Coffer/SchemaEditing``.
  public static let migrations = CheckRequirements(rawValue: 1 << 25)
  /// The backend adopts ``Coffer/CachedMemoryReleasing``.
  public static let cachedMemoryRelease = CheckRequirements(rawValue: 1 << 26)
  /// The backend adopts ``Coffer/ChangeRecording``.
  public static let changeFeed = CheckRequirements(rawValue: 1 << 27)
  /// The abilities among the requirements, the bits above a capability's.
  private static let abilities: CheckRequirements = [
    .snapshots, .migrations, .cachedMemoryRelease, .changeFeed,
  ]

  /// Everything `backend` offers: its capabilities and the abilities it adopts.
  @_spi(Backend) public init(of backend: any StorageBackend) {
    self.init(backend.capabilities)
    if backend is any SnapshotReading { insert(.snapshots) }
    if backend is any SchemaEditing { insert(.migrations) }
    if backend is any CachedMemoryReleasing { insert(.cachedMemoryRelease) }
    if backend is any ChangeRecording { insert(.changeFeed) }
  }

  /// The capabilities among these requirements.
  @_spi(Backend) public var capabilities: BackendCapabilities {
    BackendCapabilities(rawValue: rawValue & ~Self.abilities.rawValue)
  }

  /// The names of the requirements set, for reports.
  public var names: [String] {
    var names = capabilities.names
    if contains(.snapshots) { names.append("snapshots") }
    if contains(.migrations) { names.append("migrations") }
    if contains(.cachedMemoryRelease) { names.append("cachedMemoryRelease") }
    if contains(.changeFeed) { names.append("changeFeed") }
    return names
  }
}
