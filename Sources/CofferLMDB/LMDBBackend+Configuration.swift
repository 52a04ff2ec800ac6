extension LMDBBackend {
  /// How a store's environment is sized. Set from the URL's options:
  /// `lmdb:///path/dir?mapSize=256MiB&maxMapSize=16GiB&maxReaders=256`.
  public struct Configuration: Sendable, Hashable {
    /// The size of the memory map at open, in bytes (option `mapSize`, default 1 GiB). It is
    /// address space, not disk: the data file grows only as pages are written.
    public var mapSize: Int
    /// The size the map may grow to when it fills up, in bytes (option `maxMapSize`, default
    /// 64 GiB). A batch that needs more fails with ``Coffer/CofferError/Code/storageFull``.
    public var maxMapSize: Int
    /// The most read transactions that may be open at once, across every process using the
    /// store (option `maxReaders`, default 126). Takes effect when the first process opens it.
    public var maxReaders: Int

    /// The defaults: a 1 GiB map growing up to 64 GiB, 126 readers.
    public init(mapSize: Int = 1 << 30, maxMapSize: Int = 64 << 30, maxReaders: Int = 126) {
      self.mapSize = mapSize
      self.maxMapSize = maxMapSize
      self.maxReaders = maxReaders
    }
  }
}
