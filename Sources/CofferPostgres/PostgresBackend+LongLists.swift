@_spi(Backend) import Coffer

@_spi(Backend) extension PostgresBackend: LongListFiltering {
  /// An `isIn` filter is `= ANY($1)`, one array parameter whatever its length, so the reference
  /// rules read, pin and delete the rows that refer to 10,000 deleted rows with one statement
  /// each (see ``Coffer/LongListFiltering``).
  public var valuesPerFilter: Int { 10_000 }
}
