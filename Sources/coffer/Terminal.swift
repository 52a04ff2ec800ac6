import ArgumentParser
import Coffer
import Foundation

/// Where the commands write: results to standard output, problems to standard error.
enum Terminal {
  /// Writes a line to standard output.
  static func say(_ line: String = "", terminator: String = "\n") { print(line, terminator: terminator) }

  /// Writes a line to standard error.
  static func complain(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
  }

  /// Reports an error a person can act on — no stack trace — and returns the exit code to
  /// throw, so that the command ends with a failure status.
  static func failure(_ error: any Error, while doing: String) -> ExitCode {
    if let error = error as? CofferError {
      complain("coffer: \(doing) failed: \(error.description)")
    } else {
      complain("coffer: \(doing) failed: \(error)")
    }
    return ExitCode.failure
  }
}
