import ArgumentParser
@_spi(Backend) import Coffer
import CofferTools
import Foundation

extension CofferCommand {
  /// `coffer export URL > file.jsonl`: a store's data as JSON Lines.
  struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Write a store's data as JSON Lines, to standard output or a file.",
      discussion: """
        One line per row, after a header line per entity with its exact schema, and a closing line with \
        every entity's digest, so that 'coffer import' proves it read all of it. Every value round-trips \
        exactly. The store is only read. Progress goes to standard error: a bar on a terminal, or JSON lines \
        with --progress json.
        """)

    @Argument(help: ArgumentHelp("The store to export, e.g. plist:///var/app/store.plist.", valueName: "URL"))
    var url: String

    @Option(
      name: .long, help: ArgumentHelp("Export only this entity (repeat for several).", valueName: "NAME"))
    var entity: [String] = []

    @Option(
      name: [.short, .long],
      help: ArgumentHelp(
        "Write to this file instead of standard output; it appears only when the export is complete.",
        valueName: "FILE"))
    var output: String?

    @OptionGroup var observing: ObservingOptions

    func run() async throws {
      let store = try await StoreArgument.openExisting(url, role: "store", logger: observing.logger)
      let digest: StoreDigest
      let display = observing.progressDisplay()
      let progress: @Sendable (RowProgress) -> Void = { display.show(CommandProgress("export", $0)) }
      do {
        if let output {
          digest = try await Self.export(store, entities: entity, toFile: output, progress: progress)
        } else {
          let out = TextOutput(handle: .standardOutput)
          digest = try await store.exportJSONLines(
            entities: entity.isEmpty ? nil : entity, progress: progress
          ) {
            try await out.write($0)
          }
        }
        display.finish()
        try await store.close()
      } catch {
        display.finish()
        throw Terminal.failure(error, while: "exporting the store '\(store.backend.name)'")
      }
      Terminal.complain(
        "Exported \(digest.count) row\(digest.count == 1 ? "" : "s") of \(digest.entities.count) "
          + "entit\(digest.entities.count == 1 ? "y" : "ies") from \(store.backend.name).")
    }

    /// Writes the export to a temporary file beside `path`, then renames it into place.
    static func export(
      _ store: Store, entities: [String], toFile path: String,
      progress: @escaping @Sendable (RowProgress) -> Void
    ) async throws -> StoreDigest {
      let target = URL(fileURLWithPath: path)
      let partial = target.deletingLastPathComponent()
        .appendingPathComponent(".\(target.lastPathComponent).partial-\(UUID().uuidString)")
      guard FileManager.default.createFile(atPath: partial.path, contents: nil) else {
        throw CofferError(
          .io, "The export file cannot be created. Check that its folder exists and is writable.", path: path)
      }
      do {
        let handle = try FileHandle(forWritingTo: partial)
        let out = TextOutput(handle: handle)
        let digest = try await store.exportJSONLines(
          entities: entities.isEmpty ? nil : entities, progress: progress
        ) {
          try await out.write($0)
        }
        try handle.synchronize()
        try handle.close()
        guard rename(partial.path, target.path) == 0 else {
          throw CofferError(
            .io, "The finished export cannot be moved into place (\(String(cString: strerror(errno)))).",
            path: path)
        }
        return digest
      } catch {
        try? FileManager.default.removeItem(at: partial)
        throw error
      }
    }
  }
}
