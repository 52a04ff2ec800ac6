/// How far a migration (or its rehearsal) has come, after each step it ran: what
/// `coffer migrate` shows as progress.
package struct MigrationProgress: Sendable, Hashable {
  /// The step that ran last.
  package var step: String
  /// The plan's steps applied so far, those applied by earlier runs included.
  package var stepsDone: Int
  /// The plan's steps.
  package var steps: Int
  /// Rows the steps of this run touched so far.
  package var rowsTouched: Int
}
