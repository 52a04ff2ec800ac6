import CLMDB
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads liblmdb's on-disk pages with `pread`, never through the memory map, so that a page past
/// the end of a truncated file is a short read rather than a bus error.
///
/// Only what the open-time length check needs: the meta pages and the free-page database. The
/// layout is liblmdb 0.9's (data version 1) on a 64-bit machine; anything else reads as unknown.
struct LMDBPageFile: ~Copyable {
  private let descriptor: Int32
  let pageSize: Int

  /// Opens `path` for reading; `nil` when it cannot be opened.
  init?(path: String, pageSize: Int) {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0, pageSize >= 512 else {
      if descriptor >= 0 { close(descriptor) }
      return nil
    }
    self.descriptor = descriptor
    self.pageSize = pageSize
  }

  deinit { close(descriptor) }

  // Offsets and flags of liblmdb 0.9's structures (mdb.c): a page header is 16 bytes; a node
  // 8 bytes before its key; a meta page holds two database records of 48 bytes from byte 40.
  private static let headerSize = 16
  private static let branchPage: UInt16 = 0x01
  private static let leafPage: UInt16 = 0x02
  private static let overflowPage: UInt16 = 0x04
  private static let bigData: UInt16 = 0x01
  private static let magic: UInt32 = 0xBEEF_C0DE
  private static let noPage = UInt64.max

  /// The highest page number still in use in the snapshot of transaction `txnid` whose last
  /// allocated page is `lastPage`: `lastPage` less the pages at the end that the free-page
  /// database lists. Those were allocated and freed again, and may never have been written.
  /// `nil` when the meta page or the free-page database cannot be read (a page past the end of
  /// the file, or a layout this does not know).
  func lastPageInUse(txnid: Int, lastPage: Int) -> Int? {
    guard let free = freePageNumbers(txnid: txnid, lastPage: lastPage) else { return nil }
    var last = lastPage
    while last > 1, free.contains(last) { last -= 1 }
    return last
  }

  /// Every page the free-page database lists in the snapshot of transaction `txnid`, or `nil`
  /// when it cannot be read.
  func freePageNumbers(txnid: Int, lastPage: Int) -> Set<Int>? {
    guard MemoryLayout<Int>.size == 8, let root = freeRoot(txnid: txnid, lastPage: lastPage) else {
      return nil
    }
    return root == Self.noPage ? [] : freePages(root: Int(root), lastPage: lastPage)
  }

  /// The root page of the free-page database in the meta page of transaction `txnid`.
  private func freeRoot(txnid: Int, lastPage: Int) -> UInt64? {
    for meta in 0..<2 {
      guard let page = read(meta) else { return nil }
      guard Self.load(UInt32.self, page, 16) == Self.magic, Self.load(UInt32.self, page, 20) == 1,
        Self.load(UInt64.self, page, 144) == UInt64(txnid),
        Self.load(UInt64.self, page, 136) == UInt64(lastPage)
      else { continue }
      return Self.load(UInt64.self, page, 40 + 40)
    }
    return nil
  }

  /// Every page number the free-page database lists, walking its B-tree from `root`.
  private func freePages(root: Int, lastPage: Int) -> Set<Int>? {
    var free = Set<Int>()
    var pending = [root]
    var visited = 0
    while let number = pending.popLast() {
      visited += 1
      guard number > 1, number <= lastPage, visited <= lastPage, let page = read(number) else { return nil }
      let flags = Self.load(UInt16.self, page, 10)
      let lower = Int(Self.load(UInt16.self, page, 12))
      guard lower >= Self.headerSize, lower <= pageSize else { return nil }
      for slot in 0..<(lower - Self.headerSize) / 2 {
        let node = Int(Self.load(UInt16.self, page, Self.headerSize + 2 * slot))
        guard node >= Self.headerSize, node + 8 <= pageSize else { return nil }
        let low = UInt64(Self.load(UInt16.self, page, node))
        let high = UInt64(Self.load(UInt16.self, page, node + 2))
        let nodeFlags = Self.load(UInt16.self, page, node + 4)
        if flags & Self.branchPage != 0 {
          let child = low | high << 16 | UInt64(nodeFlags) << 32
          guard child <= UInt64(lastPage) else { return nil }
          pending.append(Int(child))
          continue
        }
        guard flags & Self.leafPage != 0 else { return nil }
        let size = Int(low | high << 16)
        let start = node + 8 + Int(Self.load(UInt16.self, page, node + 6))
        let list: [UInt8]
        if nodeFlags & Self.bigData != 0 {
          guard start + 8 <= pageSize,
            let data = overflow(Self.load(UInt64.self, page, start), size, lastPage)
          else { return nil }
          list = data
        } else {
          guard start + size <= pageSize else { return nil }
          list = Array(page[start..<start + size])
        }
        // An ID list: its length, then that many page numbers.
        guard size >= 8 else { return nil }
        let count = Self.load(UInt64.self, list, 0)
        guard count <= UInt64(size / 8 - 1) else { return nil }
        for position in 0..<Int(count) {
          free.insert(Int(clamping: Self.load(UInt64.self, list, 8 * (position + 1))))
        }
      }
    }
    return free
  }

  /// The `size` bytes of data held in the overflow pages starting at `number`.
  private func overflow(_ number: UInt64, _ size: Int, _ lastPage: Int) -> [UInt8]? {
    guard number > 1, number <= UInt64(lastPage), let first = read(Int(number)),
      Self.load(UInt16.self, first, 10) & Self.overflowPage != 0
    else { return nil }
    let pages = Int(Self.load(UInt32.self, first, 12))
    guard pages >= 1, pages <= lastPage, Self.headerSize + size <= pages * pageSize,
      let all = read(Int(number), pages: pages)
    else { return nil }
    return Array(all[Self.headerSize..<Self.headerSize + size])
  }

  /// `pages` whole pages from page `number`, or `nil` when the file ends before them.
  private func read(_ number: Int, pages: Int = 1) -> [UInt8]? {
    let (start, overflow) = number.multipliedReportingOverflow(by: pageSize)
    guard !overflow else { return nil }
    var bytes = [UInt8](repeating: 0, count: pages * pageSize)
    var done = 0
    while done < bytes.count {
      let got = bytes.withUnsafeMutableBytes { buffer in
        pread(descriptor, buffer.baseAddress.map { $0 + done }, buffer.count - done, off_t(start + done))
      }
      guard got > 0 else { return nil }
      done += got
    }
    return bytes
  }

  private static func load<T: FixedWidthInteger>(_ type: T.Type, _ bytes: [UInt8], _ offset: Int) -> T {
    guard offset >= 0, offset + MemoryLayout<T>.size <= bytes.count else { return 0 }
    return bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
  }
}
