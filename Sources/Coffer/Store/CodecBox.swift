/// A prepared codec of any type, as the store's cache holds it.
@usableFromInline
protocol CodecBoxing: AnyObject, Sendable {
  /// The schema the codec encodes and decodes rows with.
  var schema: EntitySchema { get }
}

/// The codec of one type, boxed for the store's cache.
///
/// The cache is keyed by `ObjectIdentifier(T.self)` and only ever stores a `CodecBox<T>` under
/// `T`'s key, so unboxing needs no dynamic cast: a checked `as?` from an existential costs a
/// runtime metadata lookup on every `get`, which showed in point-get profiles.
@usableFromInline
final class CodecBox<T: Storable>: CodecBoxing {
  @usableFromInline let codec: RowCodec<T>

  init(_ codec: RowCodec<T>) { self.codec = codec }

  @usableFromInline var schema: EntitySchema { codec.schema }

  /// The codec in a box found under `ObjectIdentifier(T.self)`.
  @inlinable
  static func unbox(_ box: any CodecBoxing) -> RowCodec<T> {
    unsafeDowncast(box, to: CodecBox<T>.self).codec
  }
}
