@_spi(Backend) import Coffer

/// Full-text matches are evaluated where every other filter is, with Coffer's own tokenizer.
@_spi(Backend) extension PlistBackend: TextMatching {}

/// Its snapshots are the tables, whose text indexes answer searches.
extension PlistBackend: TextIndexSnapshots {}
