/// A line an extra process of `coffer soak` prints on its standard output for the parent: the
/// counts of one window with its resources in it (the lowest samples), or what it counted after the
/// last window (`end`).
///
/// ```
/// window 3 commits=812 reads=1530 retries=41 exhausted=0 violations=0 rss=40960000 anon=20480000 fds=14 errors=
/// end commits=2 reads=1 retries=0 exhausted=0 violations=0 rss=- anon=- fds=- errors=io:1
/// ```
package struct SoakChildLine: Sendable, Equatable {
  /// The window the counts are of (1 for the first), or `nil` for the `end` line.
  package var window: Int?
  /// What the child counted.
  package var counts: SoakCounts
  /// The child's resources in the window: the lowest of its samples.
  package var resources: SoakResources

  /// The line, without its newline.
  package var encoded: String {
    func show(_ number: Int?) -> String { number.map(String.init) ?? "-" }
    let head = window.map { "window \($0)" } ?? "end"
    let errors = counts.errors.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(
      separator: ",")
    return "\(head) commits=\(counts.commits) reads=\(counts.reads) retries=\(counts.retries) "
      + "exhausted=\(counts.exhausted) violations=\(counts.violations) "
      + "rss=\(show(resources.residentBytes)) anon=\(show(resources.anonymousBytes)) fds=\(show(resources.openFiles)) "
      + "errors=\(errors)"
  }

  /// A line with these parts.
  package init(window: Int?, counts: SoakCounts, resources: SoakResources) {
    self.window = window
    self.counts = counts
    self.resources = resources
  }

  /// Reads a line ``encoded`` wrote; `nil` for anything else.
  package init?(parsing line: Substring) {
    var words = line.split(separator: " ")[...]
    switch words.popFirst() {
    case "window":
      guard let number = words.popFirst().flatMap({ Int($0) }) else { return nil }
      window = number
    case "end": window = nil
    default: return nil
    }
    var fields: [Substring: Substring] = [:]
    for word in words {
      guard let equals = word.firstIndex(of: "=") else { return nil }
      fields[word[..<equals]] = word[word.index(after: equals)...]
    }
    func number(_ key: Substring) -> Int? { fields[key].flatMap { Int($0) } }
    guard let commits = number("commits"), let reads = number("reads"), let retries = number("retries"),
      let exhausted = number("exhausted"), let violations = number("violations"),
      let errorList = fields["errors"]
    else { return nil }
    var errors: [String: Int] = [:]
    for entry in errorList.split(separator: ",") {
      let parts = entry.split(separator: ":")
      guard parts.count == 2, let count = Int(parts[1]) else { return nil }
      errors[String(parts[0]), default: 0] += count
    }
    counts = SoakCounts(
      commits: commits, reads: reads, retries: retries, exhausted: exhausted, violations: violations,
      errors: errors)
    resources = SoakResources(
      residentBytes: number("rss"), anonymousBytes: number("anon"), openFiles: number("fds"))
  }
}
