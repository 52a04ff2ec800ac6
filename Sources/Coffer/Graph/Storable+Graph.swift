/// A ``Storable`` type that can make a new value from an id alone, with every other field at
/// the type's default. ``ModelGraph/instance(of:id:)`` uses it to get or create a value.
///
/// ```swift
/// struct Author: CreatableByID {
///   var id: String
///   var name = ""
///   var email: String?
///   init(id: String) { self.id = id }
/// }
/// let author = try await graph.instance(of: Author.self, id: "0001")
/// ```
public protocol CreatableByID: Storable {
  /// A new value with this id and the type's defaults.
  init(id: ID)
}

/// A ``Storable`` type whose values a ``ModelGraph`` never keeps just because they were read:
/// ``ModelGraph/get(_:id:)`` and ``ModelGraph/instance(of:id:)`` return them without retaining
/// them. A value is kept only when added explicitly — inserted, updated, upserted or deleted through
/// the graph, or created by `instance(of:id:)` (a new value is an insert to save).
///
/// ```swift
/// struct LogLine: Storable, GraphOptOut { var id: UUID; var text: String }
/// ```
public protocol GraphOptOut: Storable {}

extension CreatableByID {
  /// The value with this id in the current graph (see ``ModelGraph/current``), created with the
  /// type's defaults if neither the graph nor its store has it.
  ///
  /// ```swift
  /// try await withGraph(graph) {
  ///   let author = try await Author.instance(id: "0001")
  /// }
  /// ```
  ///
  /// - Throws: ``CofferError/Code/invalidConfiguration`` outside ``withGraph(_:_:)``, or the
  ///   store's error while loading.
  public static func instance(id: ID) async throws -> Self {
    try await ModelGraph.requireCurrent().instance(of: Self.self, id: id)
  }
}
