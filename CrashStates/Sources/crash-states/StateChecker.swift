import Foundation

/// What opening one crash state gave.
enum Outcome {
  /// The store opened and every row was read.
  case opened(StoreContents)
  /// The store refused to open (or to be read) with a `CofferError` of this code.
  case typedError(code: String, message: String)
  /// An error that is not a `CofferError`.
  case untyped(String)
  /// The child died (a signal, or an exit without an answer).
  case crashed(String)
  /// The child answered nothing within the timeout.
  case hang
}

/// Opens crash states in child processes, a batch per child: each state is written to a fresh
/// directory, checked, and removed. A child that crashes or hangs is replaced, and the state it
/// was on gets the blame; the rest of its batch goes to the next child.
final class StateChecker {
  private let executable: String
  private let template: String
  private let directory: String
  private let timeout: Double
  private let batchSize: Int
  private let keep: String?
  private var queue: [(digest: StateDigest, image: FileImage, label: String)] = []
  /// The outcome of every state checked, by digest.
  private(set) var outcomes: [StateDigest: Outcome] = [:]
  private var serial = 0

  /// A checker that opens states with `template` (`{root}` for the state's directory) in
  /// children of `executable`, under `directory`, copying failing states to `keep` if given.
  init(
    executable: String, template: String, directory: String, timeout: Double, batchSize: Int, keep: String?
  ) {
    self.executable = executable
    self.template = template
    self.directory = directory
    self.timeout = timeout
    self.batchSize = batchSize
    self.keep = keep
  }

  /// Queues a state; checks a batch when enough are queued.
  func enqueue(_ digest: StateDigest, _ image: FileImage, label: String) throws {
    queue.append((digest, image, label))
    if queue.count >= batchSize { try flush() }
  }

  /// Checks everything queued.
  func flush() throws {
    guard !queue.isEmpty else { return }
    var roots: [String] = []
    for entry in queue {
      serial += 1
      let root = directory + "/state-\(serial)"
      try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
      try entry.image.materialize(at: root)
      roots.append(root)
    }
    var answers: [Outcome?] = Array(repeating: nil, count: queue.count)
    var next = 0
    while next < queue.count {
      next = try runChild(roots: roots, from: next, answers: &answers)
    }
    for (index, entry) in queue.enumerated() {
      guard let outcome = answers[index] else { throw ExplorerFailure("a state was left unchecked") }
      outcomes[entry.digest] = outcome
      if let keep, Self.isFailure(outcome) { try save(roots[index], label: entry.label, to: keep) }
      try? FileManager.default.removeItem(atPath: roots[index])
    }
    queue = []
  }

  /// Whether an outcome fails whatever was acknowledged (a crash, a hang, an untyped error,
  /// half a batch).
  static func isFailure(_ outcome: Outcome) -> Bool {
    switch outcome {
    case .opened(let contents): contents.wholePrefix == nil
    case .typedError: false
    case .untyped, .crashed, .hang: true
    }
  }

  private func save(_ root: String, label: String, to keep: String) throws {
    let name = label.replacingOccurrences(of: " ", with: "_").replacingOccurrences(of: "/", with: "-")
    let target = keep + "/" + name
    try? FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true)
    try? FileManager.default.removeItem(atPath: target)
    try FileManager.default.copyItem(atPath: root, toPath: target)
  }

  /// Runs one child over the states from `start`, and returns where the next child must begin.
  private func runChild(roots: [String], from start: Int, answers: inout [Outcome?]) throws -> Int {
    let list = directory + "/list-\(serial)-\(start)"
    let lines = (start..<roots.count).map { "\($0)\t\(roots[$0])\n" }.joined()
    try lines.write(toFile: list, atomically: false, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: list) }
    let errorLog = directory + "/child-errors"
    try? FileManager.default.removeItem(atPath: errorLog)
    let child = try ChildProcess([executable, "check", template, list], errorLog: errorLog)
    var next = start
    while next < roots.count {
      switch child.readLine(timeout: timeout) {
      case .text(let line):
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard let index = Int(fields[0]), index == next, fields.count >= 2 else {
          throw ExplorerFailure("the checker answered '\(line)' for state \(next)")
        }
        answers[index] = Self.parse(Array(fields.dropFirst()))
        next += 1
      case .timedOut:
        child.kill()
        _ = child.wait()
        answers[next] = .hang
        return next + 1
      case .end:
        let ending = child.wait()
        let log = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
        let tail = String(log.suffix(400)).replacingOccurrences(of: "\n", with: " | ")
        answers[next] = .crashed("\(ending.description); stderr: \(tail)")
        return next + 1
      }
    }
    let ending = child.wait()
    if ending != .exited(0) {
      throw ExplorerFailure("the checker answered every state and then ended with \(ending.description)")
    }
    return next
  }

  private static func parse(_ fields: [String]) -> Outcome {
    func numbers(_ text: String) -> [Int64] {
      text == "-" ? [] : text.split(separator: ",").compactMap { Int64($0) }
    }
    switch fields.first {
    case "OPENED" where fields.count == 5:
      return .opened(
        StoreContents(
          complete: numbers(fields[1]), partial: numbers(fields[2]), corrupt: Int(fields[3]) ?? -1,
          counter: Int64(fields[4])))
    case "ERROR" where fields.count >= 3:
      return .typedError(code: fields[1], message: fields[2...].joined(separator: " "))
    case "UNTYPED":
      return .untyped(fields.dropFirst().joined(separator: " "))
    default:
      return .untyped("an answer the explorer cannot read: \(fields.joined(separator: " "))")
    }
  }
}
