import ArgumentParser
@_spi(Backend) import Coffer
import CofferTools
import Foundation

extension CofferCommand {
  /// `coffer inspect URL`: what a store holds, without the app's types.
  struct Inspect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract:
        "Describe a store: backend, capabilities, format, size, and each entity with its schema and rows.",
      discussion:
        "Reads the store without changing it. --json prints the same as one JSON object, for scripts.")

    @Argument(
      help: ArgumentHelp("The store to describe, e.g. sqlite:///var/app/db.sqlite.", valueName: "URL"))
    var url: String

    @Flag(name: .long, help: "Print one JSON object instead of text.")
    var json = false

    @OptionGroup var logging: LoggingOptions

    func run() async throws {
      let store = try await StoreArgument.openExisting(url, role: "store", logger: logging.logger)
      let inspection: StoreInspection
      do {
        inspection = try await store.inspect()
        try await store.close()
      } catch {
        throw Terminal.failure(error, while: "inspecting the store '\(store.backend.name)'")
      }
      if json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        Terminal.say(String(decoding: try encoder.encode(inspection), as: UTF8.self))
      } else {
        Terminal.say(Self.text(of: inspection), terminator: "")
      }
    }

    /// The text `coffer inspect` prints.
    static func text(of inspection: StoreInspection) -> String {
      var lines = ["Store: \(inspection.store)", "  backend: \(inspection.backend)"]
      lines.append("  capabilities: \(inspection.capabilities.joined(separator: ", "))")
      let storage = inspection.storage
      lines.append("  format version: \(storage.formatVersion ?? "not given by this backend")")
      lines.append("  size: \(storage.bytesOnDisk.map(Self.size) ?? "not given by this backend")")
      for detail in storage.details { lines.append("  \(detail.name): \(detail.value)") }
      let rows = inspection.entities.reduce(0) { $0 + $1.rows }
      lines.append(
        "  \(inspection.entities.count) entit\(inspection.entities.count == 1 ? "y" : "ies"), "
          + "\(rows) row\(rows == 1 ? "" : "s")")
      for entity in inspection.entities {
        let schema = entity.schema
        lines.append("")
        lines.append(
          "Entity \(schema.name): \(entity.rows) row\(entity.rows == 1 ? "" : "s"), id \(schema.idField.name)"
        )
        for field in schema.fields {
          var line = "  \(field.name): \(field.kind.rawValue)\(field.isOptional ? "?" : "")"
          if let value = field.defaultValue { line += " = \(value)" }
          lines.append(line)
        }
        for index in schema.indexes {
          lines.append(
            "  \(index.isText ? "text" : index.isUnique ? "unique" : "index") (\(index.fields.joined(separator: ", ")))"
          )
        }
      }
      return lines.joined(separator: "\n") + "\n"
    }

    /// `12,288 bytes (12.0 KiB)`.
    static func size(_ bytes: Int64) -> String {
      let units = ["KiB", "MiB", "GiB", "TiB"]
      var amount = Double(bytes)
      var unit = -1
      while amount >= 1024, unit < units.count - 1 {
        amount /= 1024
        unit += 1
      }
      let exact = "\(bytes) byte\(bytes == 1 ? "" : "s")"
      return unit < 0 ? exact : exact + " (" + String(format: "%.1f", amount) + " " + units[unit] + ")"
    }
  }
}
