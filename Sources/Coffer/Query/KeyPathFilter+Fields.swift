// Comparisons of two properties of one value, `\.editedAt > \.createdAt`: the key-path spelling
// of ``Filter/compareFields(field:op:other:)``. Both properties must be stored with the same
// kind (an optional and a non-optional property of one type compare fine); a pair of another
// kind makes the query fail with ``CofferError/Code/invalidQuery`` when it runs. A value where
// either property is nil never matches.

/// The two properties are equal (never matches a value where either is nil).
public func == <Root: KeyPathStorable, V: ValueConvertible, W: ValueConvertible>(
  lhs: KeyPath<Root, V>, rhs: KeyPath<Root, W>
) -> KeyPathFilter<Root> {
  KeyPathFilter(comparing: lhs, .equal, rhs)
}

/// The two properties differ (never matches a value where either is nil).
public func != <Root: KeyPathStorable, V: ValueConvertible, W: ValueConvertible>(
  lhs: KeyPath<Root, V>, rhs: KeyPath<Root, W>
) -> KeyPathFilter<Root> {
  KeyPathFilter(comparing: lhs, .notEqual, rhs)
}

/// The first property is less than the second (never matches a value where either is nil).
public func < <Root: KeyPathStorable, V: ValueConvertible, W: ValueConvertible>(
  lhs: KeyPath<Root, V>, rhs: KeyPath<Root, W>
) -> KeyPathFilter<Root> {
  KeyPathFilter(comparing: lhs, .less, rhs)
}

/// The first property is less than or equal to the second (never matches a value where either is nil).
public func <= <Root: KeyPathStorable, V: ValueConvertible, W: ValueConvertible>(
  lhs: KeyPath<Root, V>, rhs: KeyPath<Root, W>
) -> KeyPathFilter<Root> {
  KeyPathFilter(comparing: lhs, .lessOrEqual, rhs)
}

/// The first property is greater than the second (never matches a value where either is nil).
public func > <Root: KeyPathStorable, V: ValueConvertible, W: ValueConvertible>(
  lhs: KeyPath<Root, V>, rhs: KeyPath<Root, W>
) -> KeyPathFilter<Root> {
  KeyPathFilter(comparing: lhs, .greater, rhs)
}

/// The first property is greater than or equal to the second (never matches a value where either
/// is nil).
public func >= <Root: KeyPathStorable, V: ValueConvertible, W: ValueConvertible>(
  lhs: KeyPath<Root, V>, rhs: KeyPath<Root, W>
) -> KeyPathFilter<Root> {
  KeyPathFilter(comparing: lhs, .greaterOrEqual, rhs)
}

extension KeyPathFilter {
  /// `lhs op rhs` on the fields two key paths read.
  init(comparing lhs: PartialKeyPath<Root>, _ op: ComparisonOperator, _ rhs: PartialKeyPath<Root>) {
    guard let field = Root.storedFieldName(for: lhs) else {
      self.init(filter: .all, error: Root.notStored(lhs))
      return
    }
    guard let other = Root.storedFieldName(for: rhs) else {
      self.init(filter: .all, error: Root.notStored(rhs))
      return
    }
    self.init(filter: .compareFields(field: field, op: op, other: other), error: nil)
  }

  /// The string property equals the text, ignoring ASCII case (see ``StringMatch``).
  public static func equalsIgnoringCase(_ keyPath: KeyPath<Root, String>, _ text: String) -> KeyPathFilter {
    KeyPathFilter(keyPath) { $0.equals(text, ignoringCase: true) }
  }

  /// The optional string property equals the text, ignoring ASCII case (never matches null).
  public static func equalsIgnoringCase(_ keyPath: KeyPath<Root, String?>, _ text: String) -> KeyPathFilter {
    KeyPathFilter(keyPath) { $0.equals(text, ignoringCase: true) }
  }
}
