/// The command-line options that a workload comparing engines with SQLite shares with the
/// others: how many repetitions, which engines, a PostgreSQL server, where the report goes.
/// Its own options it reads itself, through `own`.
struct WorkloadArguments {
  /// Repetitions of each measurement; the median is reported.
  var repetitions: Int
  /// The engines to measure, SQLite first: it is the reference the others are divided by, so
  /// it always runs. PostgreSQL joins the default list when a server is given.
  var engines: [String]
  /// The folder the report goes to (`Docs` when `nil`).
  var output: String?
  /// Whether to write the report at all.
  var write = true

  /// Reads `arguments`, handing each option the workload has of its own to `own` with a reader
  /// of the positive number after it; `own` returns whether it knew the option.
  ///
  /// - Parameters:
  ///   - flag: the workload's flag (`--cascade`), for messages.
  ///   - enginesOption: the option that names the engines (`--cascade-engines`).
  ///   - repetitions: the default number of repetitions.
  ///   - engines: the default engines, PostgreSQL aside.
  init(
    _ arguments: [String], flag: String, enginesOption: String, repetitions: Int, engines: [String],
    own: (_ argument: String, _ number: () throws -> Int) throws -> Bool
  ) throws {
    self.repetitions = repetitions
    self.engines = engines
    var enginesNamed = false
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      func number() throws -> Int {
        guard let text = iterator.next(), let value = Int(text), value > 0 else {
          throw UsageError(message: "\(argument) needs a positive number")
        }
        return value
      }
      switch argument {
      case "--repetitions": self.repetitions = try number()
      case enginesOption:
        guard let text = iterator.next() else { throw UsageError(message: "\(argument) needs a list") }
        self.engines = text.split(separator: ",").map(String.init)
        enginesNamed = true
      case "--postgres-url":
        guard let url = iterator.next() else { throw UsageError(message: "--postgres-url needs a URL") }
        try PostgresServer.use(url)
      case "--output": output = iterator.next()
      case "--no-write": write = false
      default:
        guard try own(argument, number) else {
          throw UsageError(message: "unknown argument \(argument) for \(flag)")
        }
      }
    }
    if !enginesNamed, PostgresServer.absence == nil { self.engines.append("postgres") }
    if !self.engines.contains("sqlite") { self.engines.insert("sqlite", at: 0) }
  }
}
