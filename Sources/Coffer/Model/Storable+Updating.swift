extension Storable {
  /// A copy of the value with one property changed: a functional setter.
  ///
  /// ```swift
  /// let edited = message.updating(\.text, to: "See you at 8").updating(\.isRead, to: true)
  /// try await store.update(edited)
  /// ```
  public func updating<V>(_ keyPath: WritableKeyPath<Self, V>, to value: V) -> Self {
    var copy = self
    copy[keyPath: keyPath] = value
    return copy
  }
}
