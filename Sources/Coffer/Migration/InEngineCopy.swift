/// What ``SchemaEditor/copyRows(from:into:converting:)`` needs of an SQL engine, worked out once
/// for every backend that copies rows with `INSERT … SELECT`.
@_spi(Backend) public enum InEngineCopy {
  /// The select list that copies a source table's `columns` (of kinds `old`) into a target of
  /// kinds `new`: each column as it is where the kinds match and no conversion is asked, and
  /// `conversion(built-in, column)` where one is (between the two kinds it converts); `nil` when
  /// the kinds or counts differ otherwise or `conversion` returns `nil` (the engine cannot give
  /// that conversion's result exactly), and the caller then copies row by row.
  public static func selectList(
    columns: [String], from old: [FieldKind], to new: [FieldKind],
    converting conversions: [Int: FieldConversion.BuiltIn],
    _ conversion: (FieldConversion.BuiltIn, String) -> String?
  ) -> [String]? {
    guard columns.count == old.count, old.count == new.count else { return nil }
    var list: [String] = []
    list.reserveCapacity(columns.count)
    for position in columns.indices {
      if let builtIn = conversions[position] {
        guard builtIn.converts(old[position], to: new[position]),
          let expression = conversion(builtIn, columns[position])
        else { return nil }
        list.append(expression)
      } else {
        guard old[position] == new[position] else { return nil }
        list.append(columns[position])
      }
    }
    return list
  }
}
