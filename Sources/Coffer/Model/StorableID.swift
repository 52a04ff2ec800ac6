import Foundation

/// A type that can identify a stored record: `Int64`, `Int`, `String` or `UUID`.
///
/// An id is a ``StoredScalar`` (and so a ``ValueConvertible``) that can also be hashed: its
/// stored kind, its ``ValueConvertible/storedValue`` and how it is read back are the scalar's.
public protocol StorableID: StoredScalar, Hashable {}

// Ids are looked up on every `get`: each one states its stored value directly.
extension Int64: StorableID {
  /// ``Value/int(_:)``.
  @inlinable public var storedValue: Value { .int(self) }
}

extension Int: StorableID {
  /// ``Value/int(_:)``.
  @inlinable public var storedValue: Value { .int(Int64(self)) }
}

extension String: StorableID {
  /// ``Value/string(_:)``.
  @inlinable public var storedValue: Value { .string(self) }
}

extension UUID: StorableID {
  /// ``Value/uuid(_:)``.
  @inlinable public var storedValue: Value { .uuid(self) }
}
