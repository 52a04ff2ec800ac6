import Coffer
import Foundation

/// The model graph at work on the demo's store, narrated: get-or-create, a scratch graph
/// discarded and one committed, an event stream, a vetoed change, undo and a save.
///
/// It keeps chat profiles under an entity of its own, with a fixed id, so its output is the
/// same on every run and it can first remove what an earlier run saved.
struct GraphDemo {
  /// A chat participant's profile: a plain `Codable` value that a graph can create from an id.
  struct Profile: CreatableByID, Equatable {
    static var entityName: String { "DemoProfile" }
    var id: String
    var displayName: String
    var status: String

    init(id: String) {
      self.id = id
      self.displayName = id.capitalized
      self.status = "offline"
    }
  }

  let store: Store
  let say: (String) -> Void

  func run() async throws {
    say("")
    say("Model graph (Docs/ModelGraph.md): one value per id, changes saved as one batch")
    try await store.query(Profile.self).delete()
    let graph = ModelGraph(store: store)
    let events = graph.events()

    let ana = try await graph.instance(of: Profile.self, id: "ana")
    let again = try await graph.instance(of: Profile.self, id: "ana")
    say("G1. Get or create \"ana\": \(describe(ana)) — created with the defaults")
    say(
      "    asked again: \(again == ana ? "the same value" : "a different value"); graph holds \(graph.count)")

    let discarded = graph.makeScratch()
    try await discarded.update(Profile.self, id: "ana") { $0.displayName = "Ana (draft)" }
    discarded.discard()
    say("G2. Scratch graph renamed her, then was discarded: graph still says \(try await name(in: graph))")

    let committed = graph.makeScratch()
    try await committed.update(Profile.self, id: "ana") { $0.status = "online" }
    say(
      "    Second scratch graph set her online; before commit the graph says \(try await status(in: graph))")
    try await committed.commit()
    say("    after commit: \(try await status(in: graph))")

    graph.willChange(Profile.self) { change in
      change.new?.displayName.isEmpty == true ? .veto("a profile needs a display name") : .allow
    }
    do {
      try await graph.update(Profile.self, id: "ana") { $0.displayName = "" }
      say("G3. Clearing her name was unexpectedly accepted")
    } catch let error as CofferError {
      say("G3. Clearing her name was vetoed by a will-change hook: \(error.code)")
      say("    the graph kept \(try await name(in: graph))")
    }

    try await graph.undo()
    say("G4. Undo the commit: status is \(try await status(in: graph)) again")

    let summary = try await graph.save()
    let stored = try await store.get(Profile.self, id: "ana")
    say(
      "G5. Save: \(summary.inserted) inserted in one batch; the store has \(stored.map(describe) ?? "nothing")"
    )

    say("G6. The graph's event stream saw:")
    var iterator = events.makeAsyncIterator()
    while let event = await iterator.next() {
      say("    \(event)")
      if case .saved = event { break }
    }
  }

  private func describe(_ profile: Profile) -> String {
    "\"\(profile.displayName)\", \(profile.status)"
  }

  private func name(in graph: ModelGraph) async throws -> String {
    "\"\(try await graph.get(Profile.self, id: "ana")?.displayName ?? "-")\""
  }

  private func status(in graph: ModelGraph) async throws -> String {
    try await graph.get(Profile.self, id: "ana")?.status ?? "-"
  }
}
