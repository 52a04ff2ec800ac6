// Comparisons of a key path to an enum property with a value of the enum, by raw value: an enum
// whose raw value is a ``StoredScalar`` is stored as its raw value, so it can be compared (and
// sorted, ``StoreQuery/sort(_:_:)``) with nothing declared. These overloads are disfavoured, so
// an enum that also declares ``ValueConvertible`` takes the ordinary ones, with the same result.

/// Equal, by raw value.
@_disfavoredOverload
public func == <Root: KeyPathStorable, V: RawRepresentable>(lhs: KeyPath<Root, V>, rhs: V) -> KeyPathFilter<
  Root
>
where V.RawValue: StoredScalar {
  KeyPathFilter(lhs) { $0 == rhs.rawValue }
}

/// Equal, by raw value (`== nil` matches null).
@_disfavoredOverload
public func == <Root: KeyPathStorable, V: RawRepresentable>(lhs: KeyPath<Root, V?>, rhs: V?) -> KeyPathFilter<
  Root
>
where V.RawValue: StoredScalar {
  KeyPathFilter(lhs) { $0 == rhs?.rawValue }
}

/// Not equal, by raw value (never matches null).
@_disfavoredOverload
public func != <Root: KeyPathStorable, V: RawRepresentable>(lhs: KeyPath<Root, V>, rhs: V) -> KeyPathFilter<
  Root
>
where V.RawValue: StoredScalar {
  KeyPathFilter(lhs) { $0 != rhs.rawValue }
}

/// Not equal, by raw value (`!= nil` matches non-null; `!= x` never matches null).
@_disfavoredOverload
public func != <Root: KeyPathStorable, V: RawRepresentable>(lhs: KeyPath<Root, V?>, rhs: V?) -> KeyPathFilter<
  Root
>
where V.RawValue: StoredScalar {
  KeyPathFilter(lhs) { $0 != rhs?.rawValue }
}

/// Less than, by raw value.
@_disfavoredOverload
public func < <Root: KeyPathStorable, V: RawRepresentable>(lhs: KeyPath<Root, V>, rhs: V) -> KeyPathFilter<
  Root
>
where V.RawValue: StoredScalar {
  KeyPathFilter(lhs) { $0 < rhs.rawValue }
}

/// Less than or equal, by raw value.
@_disfavoredOverload
public func <= <Root: KeyPathStorable, V: RawRepresentable>(lhs: KeyPath<Root, V>, rhs: V) -> KeyPathFilter<
  Root
>
where V.RawValue: StoredScalar {
  KeyPathFilter(lhs) { $0 <= rhs.rawValue }
}

/// Greater than, by raw value.
@_disfavoredOverload
public func > <Root: KeyPathStorable, V: RawRepresentable>(lhs: KeyPath<Root, V>, rhs: V) -> KeyPathFilter<
  Root
>
where V.RawValue: StoredScalar {
  KeyPathFilter(lhs) { $0 > rhs.rawValue }
}

/// Greater than or equal, by raw value.
@_disfavoredOverload
public func >= <Root: KeyPathStorable, V: RawRepresentable>(lhs: KeyPath<Root, V>, rhs: V) -> KeyPathFilter<
  Root
>
where V.RawValue: StoredScalar {
  KeyPathFilter(lhs) { $0 >= rhs.rawValue }
}

extension KeyPathFilter {
  /// The enum property equals one of the values, by raw value (an empty list matches nothing).
  @_disfavoredOverload
  public static func isIn<V: RawRepresentable>(_ keyPath: KeyPath<Root, V>, _ values: [V]) -> KeyPathFilter
  where V.RawValue: StoredScalar {
    KeyPathFilter(keyPath) { $0.isIn(values.map(\.rawValue)) }
  }

  /// The optional enum property equals one of the values, by raw value (`nil` in the list
  /// matches null).
  @_disfavoredOverload
  public static func isIn<V: RawRepresentable>(_ keyPath: KeyPath<Root, V?>, _ values: [V?]) -> KeyPathFilter
  where V.RawValue: StoredScalar {
    KeyPathFilter(keyPath) { $0.isIn(values.map { $0?.rawValue }) }
  }
}
