/// How far a tool that reads or writes every row of a store has come: handed to the progress
/// callbacks of ``Store/exportJSONLines(entities:progress:write:)``,
/// ``Store/importJSONLines(_:progress:)`` and ``Store/verify(progress:)``.
///
/// A tool calls its callback when it starts an entity, every thousand rows or so, and when it
/// ends an entity; the last call of a tool that ends well has ``entityRowsDone`` equal to
/// ``entityRows`` of its last entity.
public struct RowProgress: Sendable, Hashable {
  /// The entity being read or written.
  public var entity: String
  /// Rows of that entity done so far.
  public var entityRowsDone: Int
  /// Rows of that entity in all, when known.
  public var entityRows: Int?
  /// Rows of every entity done so far.
  public var rowsDone: Int
  /// Rows of every entity in all, when known before the end (an import learns its total only
  /// from the export's last line).
  public var totalRows: Int?
  /// Time since the tool began.
  public var elapsed: Duration

  /// A report of how far a tool has come.
  public init(
    entity: String, entityRowsDone: Int, entityRows: Int?, rowsDone: Int, totalRows: Int?, elapsed: Duration
  ) {
    self.entity = entity
    self.entityRowsDone = entityRowsDone
    self.entityRows = entityRows
    self.rowsDone = rowsDone
    self.totalRows = totalRows
    self.elapsed = elapsed
  }
}

/// Counts a tool's rows and calls its progress callback at an entity's start and end and every
/// ``interval`` rows between.
struct RowProgressCounter: Sendable {
  /// Rows between two calls within an entity.
  static let interval = 1_000
  private let report: (@Sendable (RowProgress) -> Void)?
  private let started = ContinuousClock.now
  private var current = RowProgress(
    entity: "", entityRowsDone: 0, entityRows: nil, rowsDone: 0, totalRows: nil, elapsed: .zero)
  private var sinceShown = 0

  init(totalRows: Int?, report: (@Sendable (RowProgress) -> Void)?) {
    self.report = report
    current.totalRows = totalRows
  }

  /// Starts an entity of `rows` rows (when known) and reports it.
  mutating func start(_ entity: String, rows: Int?) {
    current.entity = entity
    current.entityRows = rows
    current.entityRowsDone = 0
    sinceShown = 0
    call()
  }

  /// Counts rows done, reporting when ``interval`` rows went by since the last report.
  mutating func add(_ rows: Int) {
    current.entityRowsDone += rows
    current.rowsDone += rows
    sinceShown += rows
    if sinceShown >= Self.interval { call() }
  }

  /// Reports the end of the entity, when rows went by since the last report.
  mutating func endEntity() {
    if sinceShown > 0 { call() }
  }

  /// Reports the end of a tool that learned its total only at the end.
  mutating func end(totalRows: Int) {
    current.totalRows = totalRows
    call()
  }

  private mutating func call() {
    sinceShown = 0
    guard let report else { return }
    current.elapsed = ContinuousClock.now - started
    report(current)
  }
}
