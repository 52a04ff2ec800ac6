extension ModelGraph {
  /// The graph of the running task, set by ``withGraph(_:_:)``; `nil` outside one.
  ///
  /// It is a task-local value: child tasks inherit it, and tasks that run side by side never see
  /// each other's graph. There is no process-wide graph and no stack to push or pop.
  @TaskLocal public static var current: ModelGraph?

  /// The current graph, or an error that says how to set one.
  static func requireCurrent() throws -> ModelGraph {
    guard let graph = current else {
      throw CofferError(
        .invalidConfiguration,
        "No model graph is current in this task. Run the code inside withGraph(graph) { … }, "
          + "or call the graph's methods directly.")
    }
    return graph
  }
}

/// Runs `body` with `graph` as ``ModelGraph/current`` for this task and the tasks it starts,
/// and restores the previous current graph when `body` returns or throws.
///
/// ```swift
/// let scratch = graph.makeScratch()
/// try await withGraph(scratch) {
///   for id in 0..<100 { _ = try await Author.instance(id: "\(id)") }
/// }
/// ```
public func withGraph<Result>(
  _ graph: ModelGraph, _ body: () async throws -> Result
) async rethrows -> Result {
  try await ModelGraph.$current.withValue(graph, operation: body)
}
