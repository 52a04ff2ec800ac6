import Coffer
import Foundation
import Testing

/// A model with a property of every kind a Storable may have.
struct Everything: Storable, Equatable {
  enum Mood: String, Codable, CaseIterable { case calm, busy }
  struct Point: Codable, Equatable {
    var x: Double
    var y: Double
  }

  var id: UUID
  var flag: Bool
  var small: Int8
  var large: Int64
  var unsigned: UInt32
  var ratio: Double
  var single: Float
  var text: String
  var bytes: Data
  var when: Date
  var link: URL
  var mood: Mood
  var maybe: String?
  var tags: [String]
  var point: Point

  static let sample = Everything(
    id: UUID(), flag: true, small: -8, large: .min, unsigned: .max, ratio: -.infinity, single: 1.5,
    text: "e\u{301} 🍵 %_*", bytes: Data([0, 255, 7]), when: Date(timeIntervalSince1970: 1_700_000_000.654321),
    link: URL(string: "https://example.com/a?b=c")!, mood: .busy, maybe: nil, tags: ["x", "y"],
    point: Point(x: 1, y: -2))
}

@Suite struct ValueKindTests {
  @Test(arguments: graphStoreURLs) func everyKindSurvivesSaveAndAFreshGraphExactly(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Everything.sample)
      try await graph.save()
      let fresh = ModelGraph(store: store)
      #expect(try await fresh.get(Everything.self, id: Everything.sample.id) == Everything.sample)
    }
  }

  @Test(arguments: graphStoreURLs) func everyKindSurvivesASnapshotExactly(url: String) async throws {
    try await withStore(url) { store, directory in
      let graph = ModelGraph(store: store)
      try await graph.insert(Everything.sample)
      try graph.write(to: directory.file("all.plist"))
      let restored = ModelGraph(store: store)
      try restored.load(from: directory.file("all.plist"))
      #expect(try await restored.get(Everything.self, id: Everything.sample.id) == Everything.sample)
    }
  }

  @Test(arguments: graphStoreURLs) func everyKindIsRestoredExactlyByUndo(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Everything.sample)
      try await graph.update(Everything.self, id: Everything.sample.id) { value in
        value.text = "changed"
        value.tags = []
        value.maybe = "set"
      }
      try await graph.undo()
      #expect(try await graph.get(Everything.self, id: Everything.sample.id) == Everything.sample)
    }
  }
}
