import Coffer
import CofferChildProcess
import Foundation
import Testing

/// Compiles small programs against the built Coffer modules and the `@Storable` plugin, to show
/// what the compiler refuses. Needs the debug build in the package's default `.build` folder.
enum TypeChecker {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
  static let build = root.appendingPathComponent(".build/debug")
  static let modules = build.appendingPathComponent("Modules")
  static let plugin = build.appendingPathComponent("CofferMacroPlugin-tool")

  static var isAvailable: Bool {
    FileManager.default.fileExists(atPath: modules.appendingPathComponent("CofferMacros.swiftmodule").path)
      && FileManager.default.fileExists(atPath: plugin.path)
  }

  /// Type-checks `source`; returns whether it compiled and what the compiler printed.
  static func check(_ source: String) throws -> (compiles: Bool, output: String) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-typecheck-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("main.swift")
    try source.write(to: file, atomically: true, encoding: .utf8)
    let run = try ChildProcess.run(
      "swiftc",
      [
        "-typecheck", "-I", modules.path, "-load-plugin-executable", plugin.path + "#CofferMacroPlugin",
        file.path,
      ],
      standardErrorIntoOutput: true)
    return (run.termination == .exited(0), run.output)
  }

  /// A program that filters a `@Storable` type's `text: String` with `comparison`.
  static func program(filtering comparison: String) -> String {
    """
    import CofferMacros
    @Storable struct Note {
      var id: Int64
      var text: String
    }
    let filter: KeyPathFilter<Note> = \(comparison)
    """
  }
}

@Suite(.enabled(if: TypeChecker.isAvailable, "needs the debug build in .build"))
struct KeyPathTypeChecking {
  @Test func comparingAStringFieldWithAStringCompiles() throws {
    let result = try TypeChecker.check(TypeChecker.program(filtering: #"\.text == "5""#))
    #expect(result.compiles, "\(result.output)")
  }

  @Test func comparingAStringFieldWithAnIntDoesNotCompile() throws {
    let result = try TypeChecker.check(TypeChecker.program(filtering: #"\.text == 5"#))
    #expect(!result.compiles)
    #expect(result.output.contains("cannot convert value of type 'Int' to expected argument type 'String'"))
  }
}
