@_spi(Backend) import Coffer

/// One page of a bootstrap: what a replica sends a replica that has merged nothing from it yet,
/// instead of its feed from the beginning (see <doc:Sync>, "Bootstrap").
///
/// A bootstrap reads the sender's rows in id order, a page at a time, after noting its feed
/// position (``position``): rows stored without a sync state go as they are, with the sender's
/// genesis stamp (``rows``), the others as their sync states (``states``). The last page
/// (``isLast``) tells the receiver it has everything up to ``position``; from there on the
/// sender's feed follows as usual. A batch committed while the bootstrap reads is both in a page
/// or not and after ``position`` in the feed, and merging it twice changes nothing.
struct SyncBootstrapPage: Sendable {
  /// The replica that sent it.
  var source: String
  /// The position of the sender's feed the bootstrap started at.
  var position: ChangePosition?
  /// The entity of ``rows`` and ``states`` and its schema fingerprint.
  var entity: String
  var fingerprint: String
  /// The sender's genesis stamp: the state of each row of ``rows`` has each field set at it.
  var genesis: SyncClock?
  /// Whether the sender has all the rows of ``genesis`` (or their later states): a receiver that
  /// took every page has them too.
  var genesisComplete = false
  /// Rows the sender stores without a sync state.
  var rows: [Row] = []
  /// Sync states the sender keeps.
  var states: [SyncRowState] = []
  /// Whether this is the last page: the receiver has the sender's rows up to ``position``.
  var isLast = false
}
