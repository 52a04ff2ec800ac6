import Foundation

/// `crash-states [--shim PATH] [options]` explores; `write` and `check` are the modes it starts
/// itself in (the recorded writer and the checker of states).
let usage = """
  usage: crash-states --shim PATH [--commits N] [--seed N] [--variants N] [--backends a,b]
                      [--timeout SECONDS] [--batch N] [--keep DIR] [--names posix|journaled]
  Records a writer's file changes and syncs (the LD_PRELOAD shim), builds the file states a power
  cut could leave, opens each with Coffer, and reports per backend. Backends: \
  \(ExploredBackend.all.map(\.name).joined(separator: ", ")); negative controls, which must fail: \
  \(ExploredBackend.controls.map(\.name).joined(separator: ", ")).
  """

/// Parses the explorer's options.
func settings(_ arguments: [String]) throws -> ExplorerSettings {
  var settings = ExplorerSettings()
  var index = 0
  func value() throws -> String {
    index += 1
    guard index < arguments.count else {
      throw ExplorerFailure("\(arguments[index - 1]) needs a value\n\(usage)")
    }
    return arguments[index]
  }
  func number(_ text: String) throws -> Int {
    guard let number = Int(text), number >= 0 else {
      throw ExplorerFailure("'\(text)' is not a count\n\(usage)")
    }
    return number
  }
  while index < arguments.count {
    switch arguments[index] {
    case "--shim": settings.shim = try value()
    case "--commits": settings.commits = max(1, try number(try value()))
    case "--seed": settings.seed = UInt64(try number(try value()))
    case "--variants": settings.variants = try number(try value())
    case "--backends": settings.backends = try value().split(separator: ",").map(String.init)
    case "--timeout": settings.timeout = Double(max(1, try number(try value())))
    case "--batch": settings.batchSize = max(1, try number(try value()))
    case "--keep": settings.keep = try value()
    case "--names":
      switch try value() {
      case "posix": settings.namesDurableOnFileSync = false
      case "journaled": settings.namesDurableOnFileSync = true
      case let other: throw ExplorerFailure("--names takes posix or journaled, not '\(other)'\n\(usage)")
      }
    case "--help", "-h":
      print(usage)
      exit(0)
    default: throw ExplorerFailure("unknown option '\(arguments[index])'\n\(usage)")
    }
    index += 1
  }
  return settings
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
  switch arguments.first {
  case "write" where arguments.count == 3 || (arguments.count == 4 && arguments[3] == "split"):
    try await Writer.run(
      url: arguments[1], commits: Int(arguments[2]) ?? 50, splitsBatches: arguments.count == 4)
  case "check" where arguments.count == 3:
    try await Checker.run(template: arguments[1], list: arguments[2])
  default:
    let passed = try Explorer(settings: try settings(arguments)).run()
    exit(passed ? 0 : 1)
  }
} catch {
  FileHandle.standardError.write(Data("crash-states: \(error)\n".utf8))
  exit(2)
}
