/// An optional ability of a ``StorageBackend``: filtering on a long list of values in one
/// statement of one shape, whatever the list's length.
///
/// The reference rules (``DeleteRule``) read, pin and delete the rows that refer to the rows a
/// batch deletes with one ``Filter/isIn(_:_:)`` filter per chunk of deleted rows: 500 by default,
/// so that a SQL engine that binds each value as a parameter sees statements of few shapes. A
/// backend that binds the whole list as one parameter (PostgreSQL's `= ANY($1)`) adopts this
/// protocol to take larger chunks: a cascade over a thousand rows is then one count, one
/// precondition and one delete per rule, not two of each — and over a network each is a round
/// trip.
@_spi(Backend) public protocol LongListFiltering: StorageBackend {
  /// The most values one `isIn` filter of the reference rules holds on this backend; at least 1.
  var valuesPerFilter: Int { get }
}
