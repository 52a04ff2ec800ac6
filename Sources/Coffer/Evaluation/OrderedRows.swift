/// The rows of one index of an in-memory table, kept in the index's order: its fields' values
/// (``ValueOrder``), then the id. A B+tree whose nodes copies of the value share until one of
/// them writes: the writer copies only the nodes on its path, so a snapshot of a table costs
/// nothing to take and little to keep.
///
/// Each internal node keeps how many rows lie under it, so the rows of a range are counted
/// without being visited.
struct OrderedRows: Sendable {
  /// The positions of the fields the rows are ordered by: the index's, then the id's.
  let positions: [Int]
  /// The positions of the index's fields: ``positions`` but the id's. Empty in the order of
  /// ids alone.
  var indexFields: ArraySlice<Int> { positions.dropLast() }
  /// The fields a range of this order bounds: the index's, or the id in the order of ids alone.
  var rangeFields: ArraySlice<Int> { positions.count == 1 ? positions[...] : indexFields }
  private var root: Node

  /// An empty order on `fields` (positions), ties broken by the id at `idPosition`.
  init(fields: [Int], idPosition: Int) {
    positions = fields + [idPosition]
    root = Node(width: positions.count)
  }

  /// `rows`, which must already be in this order, laid out leaf by leaf.
  init(fields: [Int], idPosition: Int, sorted rows: [Row]) {
    self.init(fields: fields, idPosition: idPosition)
    guard !rows.isEmpty else { return }
    let width = positions.count
    var level = stride(from: 0, to: rows.count, by: Self.capacity).map { start in
      Node(rows: Array(rows[start..<Swift.min(start + Self.capacity, rows.count)]), width: width)
    }
    // The key of the first row under each node of the level, side by side.
    var firsts = stride(from: 0, to: rows.count, by: Self.capacity).flatMap { key(of: rows[$0]) }
    while level.count > 1 {
      var parents: [Node] = []
      var parentFirsts: [Value] = []
      for start in stride(from: 0, to: level.count, by: Self.capacity) {
        let end = Swift.min(start + Self.capacity, level.count)
        parents.append(
          Node(
            children: Array(level[start..<end]), separators: Array(firsts[(start + 1) * width..<end * width]))
        )
        parentFirsts.append(contentsOf: firsts[start * width..<(start + 1) * width])
      }
      level = parents
      firsts = parentFirsts
    }
    root = level[0]
  }

  /// `rows` put in this order.
  ///
  /// Rows already in order come back as they are, after one pass of comparisons. Otherwise their
  /// places are put in order of the leading field's values, ties kept in the order the rows came
  /// in; then each run of ties that is not already in order is sorted by a copy of its own rows'
  /// other keys. Sorting places by copied keys spares the retain and release of both rows that
  /// reading them would cost at every comparison; taking the other fields one run at a time
  /// keeps that copy small.
  func sorted(_ rows: [Row]) -> [Row] {
    guard !isInOrder(rows) else { return rows }
    // In the order of ids alone the one field is unique to each row: nothing to gather, no ties.
    let tying = positions.count > 1
    var (places, runs) =
      (tying ? groupedByLeadingValue(rows) : nil) ?? sortedByLeadingValue(rows, findingTies: tying)
    for run in runs where run.count > 1 { sortTies(&places[run], of: rows) }
    return places.map { rows[$0] }
  }

  /// The most distinct leading values ``groupedByLeadingValue(_:)`` gathers before it leaves
  /// the rows to a sort.
  private static let mostGroups = 4_096

  /// The places of `rows` grouped by the leading field's value, the groups in the order of
  /// their values, and each group's range among the places; `nil` when the field holds more than
  /// ``mostGroups`` values, or values whose order can tell apart two that hash alike (strings,
  /// say). A thread or a status takes one hash per row this way, where a sort would compare each
  /// row with some twenty others.
  private func groupedByLeadingValue(_ rows: [Row]) -> (places: [Int], runs: [Range<Int>])? {
    let leading = positions[0]
    var groups: [Value: [Int]] = [:]
    for (place, row) in rows.enumerated() {
      let value = row[leading]
      switch value {
      case .null, .bool, .int, .uuid, .date: break
      default: return nil
      }
      groups[value, default: []].append(place)
      if groups.count > Self.mostGroups { return nil }
    }
    var places: [Int] = []
    places.reserveCapacity(rows.count)
    var runs: [Range<Int>] = []
    runs.reserveCapacity(groups.count)
    for value in groups.keys.sorted(by: { ValueOrder.compare($0, $1) < 0 }) {
      let start = places.count
      places.append(contentsOf: groups[value] ?? [])
      runs.append(start..<places.count)
    }
    return (places, runs)
  }

  /// The places of `rows` sorted by the leading field's value (ties in the order the rows came
  /// in), through a copy of those values, and, when `findingTies`, the ranges of places that tie.
  private func sortedByLeadingValue(_ rows: [Row], findingTies: Bool) -> (places: [Int], runs: [Range<Int>]) {
    var leading: [Value] = []
    leading.reserveCapacity(rows.count)
    for row in rows { leading.append(row[positions[0]]) }
    var places = Array(rows.indices)
    var runs: [Range<Int>] = []
    leading.withUnsafeBufferPointer { leading in
      places.sort { lhs, rhs in
        let order = ValueOrder.compare(leading[lhs], leading[rhs])
        return order != 0 ? order < 0 : lhs < rhs
      }
      guard findingTies else { return }
      var start = 0
      while start < places.count {
        var end = start + 1
        while end < places.count, ValueOrder.compare(leading[places[start]], leading[places[end]]) == 0 {
          end += 1
        }
        runs.append(start..<end)
        start = end
      }
    }
    return (places, runs)
  }

  /// Whether `rows` are in this order, each after the one before.
  private func isInOrder(_ rows: some Sequence<Row>) -> Bool {
    var previous: Row?
    for row in rows {
      if let previous, compare(previous, row) >= 0 { return false }
      previous = row
    }
    return true
  }

  /// Puts the places of rows whose leading values tie in order by the rest of their keys.
  private func sortTies(_ places: inout ArraySlice<Int>, of rows: [Row]) {
    guard !isInOrder(places.lazy.map { rows[$0] }) else { return }
    let rest = positions.dropFirst()
    let width = rest.count
    var keys: [Value] = []
    keys.reserveCapacity(places.count * width)
    for place in places {
      for position in rest { keys.append(rows[place][position]) }
    }
    // Offsets into the run, sorted by the keys each one's row has in `keys`.
    var ranked = Array(0..<places.count)
    keys.withUnsafeBufferPointer { keys in
      ranked.sort { lhs, rhs in
        var (left, right) = (lhs * width, rhs * width)
        for _ in 0..<width {
          let order = ValueOrder.compare(keys[left], keys[right])
          if order != 0 { return order < 0 }
          left += 1
          right += 1
        }
        return false
      }
    }
    let tied = Array(places)
    for (offset, index) in ranked.enumerated() { places[places.startIndex + offset] = tied[index] }
  }

  /// This order with `added` (which must be in this order, and none of them in it already)
  /// merged in, laid out anew.
  func merged(with added: [Row]) -> OrderedRows {
    let fields = Array(indexFields)
    guard count > 0 else {
      return OrderedRows(fields: fields, idPosition: positions[positions.count - 1], sorted: added)
    }
    var all: [Row] = []
    all.reserveCapacity(count + added.count)
    var next = 0
    forEach(in: .all) { row in
      while next < added.count, compare(added[next], row) < 0 {
        all.append(added[next])
        next += 1
      }
      all.append(row)
      return true
    }
    all.append(contentsOf: added[next...])
    return OrderedRows(fields: fields, idPosition: positions[positions.count - 1], sorted: all)
  }

  /// The most rows a leaf holds, and the most children an internal node has.
  static let capacity = 64

  /// The number of rows.
  var count: Int { root.count }

  /// -1, 0 or 1 as `lhs` comes before, ties with (the same key and id), or after `rhs`.
  func compare(_ lhs: Row, _ rhs: Row) -> Int {
    // Through buffers, so that each value is compared where it lies rather than copied out.
    lhs.values.withUnsafeBufferPointer { left in
      rhs.values.withUnsafeBufferPointer { right in compare(left, right) }
    }
  }

  /// The values of `row` this order reads, in its order: what an internal node keeps of the
  /// row that separates two of its children, so that finding a child reads no row.
  private func key(of row: Row) -> [Value] { positions.map { row[$0] } }

  /// -1, 0 or 1 as a separator's `key` comes before, ties with, or after `row`.
  private func compare(key: UnsafeBufferPointer<Value>, _ row: Row) -> Int {
    row.values.withUnsafeBufferPointer { values in
      for (index, position) in positions.enumerated() {
        let order = ValueOrder.compare(key[index], values[position])
        if order != 0 { return order }
      }
      return 0
    }
  }

  /// ``compare(_:_:)`` on the values of two rows.
  private func compare(_ left: UnsafeBufferPointer<Value>, _ right: UnsafeBufferPointer<Value>) -> Int {
    for position in positions {
      let order = ValueOrder.compare(left[position], right[position])
      if order != 0 { return order }
    }
    return 0
  }

  // MARK: Changes

  /// Adds a row.
  mutating func insert(_ row: Row) {
    makeRootUnique()
    guard let (separator, right) = insert(row, into: root) else { return }
    root = Node(children: [root, right], separators: separator)
  }

  /// Removes the row that ties with `row` (the same key and id); `false` when there is none.
  @discardableResult
  mutating func remove(_ row: Row) -> Bool {
    makeRootUnique()
    guard remove(row, from: root) else { return false }
    while root.children.count == 1 { root = root.children[0] }
    return true
  }

  /// Puts `new` in the place of `old`, which ties with it (the same key and id) because the
  /// row changed none of the fields this order reads; `false` when no row here ties with it.
  @discardableResult
  mutating func replace(_ old: Row, with new: Row) -> Bool {
    makeRootUnique()
    var node = root
    while !node.children.isEmpty {
      let child = node.childIndex(for: new, in: self)
      node.makeChildUnique(child)
      node = node.children[child]
    }
    guard let position = node.position(of: old, in: self) else { return false }
    node.rows[position] = new
    return true
  }

  private mutating func makeRootUnique() {
    if !isKnownUniquelyReferenced(&root) { root = root.copy() }
  }

  /// Adds `row` under `node` (which is not shared); returns the new right sibling and its
  /// separator's key when `node` had to split.
  private func insert(_ row: Row, into node: Node) -> ([Value], Node)? {
    node.count += 1
    if node.children.isEmpty {
      let position = node.firstPosition { compare($0, row) > 0 }
      node.rows.insert(row, at: position)
      guard node.rows.count > Self.capacity else { return nil }
      // Rows added in order (rising ids, say) fill each leaf before starting the next.
      let cut = position == node.rows.count - 1 ? node.rows.count - 1 : node.rows.count / 2
      let right = Node(rows: Array(node.rows[cut...]), width: node.width)
      node.rows.removeSubrange(cut...)
      node.count = node.rows.count
      return (key(of: right.rows[0]), right)
    }
    let child = node.childIndex(for: row, in: self)
    node.makeChildUnique(child)
    guard let (separator, sibling) = insert(row, into: node.children[child]) else {
      node.counts[child] += 1
      return nil
    }
    node.counts[child] = node.children[child].count
    let width = node.width
    node.children.insert(sibling, at: child + 1)
    node.separators.insert(contentsOf: separator, at: child * width)
    node.counts.insert(sibling.count, at: child + 1)
    guard node.children.count > Self.capacity else { return nil }
    let cut = child + 1 == node.children.count - 1 ? node.children.count - 1 : node.children.count / 2
    let right = Node(
      children: Array(node.children[cut...]), separators: Array(node.separators[(cut * width)...]))
    let raised = Array(node.separators[(cut - 1) * width..<cut * width])
    node.children.removeSubrange(cut...)
    node.separators.removeSubrange(((cut - 1) * width)...)
    node.counts.removeSubrange(cut...)
    node.count -= right.count
    return (raised, right)
  }

  /// Removes the row that ties with `row` from under `node` (which is not shared), merging
  /// children that fall below a quarter full into a neighbour when both fit in one.
  private func remove(_ row: Row, from node: Node) -> Bool {
    if node.children.isEmpty {
      guard let position = node.position(of: row, in: self) else { return false }
      node.rows.remove(at: position)
      node.count -= 1
      return true
    }
    let child = node.childIndex(for: row, in: self)
    node.makeChildUnique(child)
    guard remove(row, from: node.children[child]) else { return false }
    node.count -= 1
    node.counts[child] -= 1
    node.rebalance(child)
    return true
  }

  // MARK: Ranges

  /// Visits the rows of `range` in order (backwards when `reverse`) until `body` returns
  /// `false`.
  func forEach(in range: KeyRange, reverse: Bool = false, _ body: (Row) throws -> Bool) rethrows {
    _ = try visit(root, range, reverse, body)
  }

  /// How many rows `range` holds, visiting only the nodes at its two ends.
  func count(in range: KeyRange) -> Int { count(root, range, lowerInside: false, upperInside: false) }

  /// Whether the walk should go on.
  private func visit(_ node: Node, _ range: KeyRange, _ reverse: Bool, _ body: (Row) throws -> Bool) rethrows
    -> Bool
  {
    if node.children.isEmpty {
      if reverse {
        var position = node.firstPosition { range.isAbove($0, in: self) } - 1
        while position >= 0 {
          let row = node.rows[position]
          if range.isBelow(row, in: self) { return false }
          if try !body(row) { return false }
          position -= 1
        }
      } else {
        var position = node.firstPosition { !range.isBelow($0, in: self) }
        while position < node.rows.count {
          let row = node.rows[position]
          if range.isAbove(row, in: self) { return false }
          if try !body(row) { return false }
          position += 1
        }
      }
      return true
    }
    // children[i] holds the rows from separators[i - 1] up to (not including) separators[i].
    let first = node.firstSeparator { !range.isBelow(key: $0) }
    let last = node.firstSeparator { range.isAbove(key: $0) }
    // A range whose bounds cross holds no row.
    guard first <= last else { return false }
    if reverse {
      for child in stride(from: last, through: first, by: -1)
      where try !visit(node.children[child], range, reverse, body) {
        return false
      }
    } else {
      for child in first...last where try !visit(node.children[child], range, reverse, body) { return false }
    }
    return true
  }

  private func count(_ node: Node, _ range: KeyRange, lowerInside: Bool, upperInside: Bool) -> Int {
    if lowerInside && upperInside { return node.count }
    if node.children.isEmpty {
      let start = lowerInside ? 0 : node.firstPosition { !range.isBelow($0, in: self) }
      let end = upperInside ? node.rows.count : node.firstPosition { range.isAbove($0, in: self) }
      return Swift.max(0, end - start)
    }
    let first = lowerInside ? 0 : node.firstSeparator { !range.isBelow(key: $0) }
    let last = upperInside ? node.children.count - 1 : node.firstSeparator { range.isAbove(key: $0) }
    guard first <= last else { return 0 }
    if first == last {
      return count(node.children[first], range, lowerInside: lowerInside, upperInside: upperInside)
    }
    var total = count(node.children[first], range, lowerInside: lowerInside, upperInside: true)
    for child in first + 1..<last { total += node.counts[child] }
    return total + count(node.children[last], range, lowerInside: true, upperInside: upperInside)
  }

  /// One node: a leaf of rows, or children with the rows that separate them.
  private final class Node: @unchecked Sendable {
    // Unchecked: a node is changed only through a table that holds the one reference to it
    // (`makeRootUnique`, `makeChildUnique` copy a shared one first), so no two tasks ever see
    // a node while it changes.
    var rows: [Row]
    var children: [Node]
    /// The keys (see `OrderedRows.key(of:)`) of the rows that separate the children, ``width``
    /// values each, side by side: the `i`th comes after every row under `children[i]` and at or
    /// before every row under `children[i + 1]`.
    var separators: [Value]
    /// How many values a key has: the order's fields and the id.
    let width: Int
    /// The rows under each of ``children``, kept here so that a count reads no child.
    var counts: [Int]
    /// The rows under this node.
    var count: Int

    init(rows: [Row] = [], width: Int) {
      self.rows = rows
      self.width = width
      children = []
      separators = []
      counts = []
      count = rows.count
    }

    /// An internal node over `children` (at least one), with the keys that separate them.
    init(children: [Node], separators: [Value]) {
      rows = []
      width = children[0].width
      self.children = children
      self.separators = separators
      counts = children.map(\.count)
      count = counts.reduce(0, +)
    }

    private init(copying node: Node) {
      rows = node.rows
      children = node.children
      separators = node.separators
      width = node.width
      counts = node.counts
      count = node.count
    }

    func copy() -> Node { Node(copying: self) }

    /// The first position of `rows` at which `isPast` holds, which must hold for a suffix.
    func firstPosition(where isPast: (Row) -> Bool) -> Int {
      rows.withUnsafeBufferPointer { rows in
        var low = 0
        var high = rows.count
        while low < high {
          let middle = (low + high) / 2
          if isPast(rows[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
      }
    }

    /// The position in this leaf of the row that ties with `row` (the same key and id), or `nil`.
    ///
    /// The row a table stores is the one its orders hold, sharing one array of values, so it is
    /// looked for first by that array's reference among the leaf's rows: a scan of the leaf's
    /// own storage that reads no row, where a binary search by key would load a row (a miss of
    /// the cache, most likely) at each step. An equal row held in another array is found by key.
    func position(of row: Row, in order: OrderedRows) -> Int? {
      if MemoryLayout<Row>.size == MemoryLayout<UInt>.size {
        let wanted = withUnsafeBytes(of: row) { $0.load(as: UInt.self) }
        let found = rows.withUnsafeBytes { stored in
          (0..<rows.count).first {
            stored.load(fromByteOffset: $0 * MemoryLayout<Row>.stride, as: UInt.self) == wanted
          }
        }
        if let found { return found }
      }
      let position = firstPosition { order.compare($0, row) >= 0 }
      guard position < rows.count, order.compare(rows[position], row) == 0 else { return nil }
      return position
    }

    /// The first separator whose key `isPast` holds for (which must hold for a suffix), or
    /// the number of separators: the index of the child that holds the first row where it holds.
    func firstSeparator(where isPast: (UnsafeBufferPointer<Value>) -> Bool) -> Int {
      separators.withUnsafeBufferPointer { keys in
        var low = 0
        var high = children.count - 1
        while low < high {
          let middle = (low + high) / 2
          let key = UnsafeBufferPointer(rebasing: keys[middle * width..<(middle + 1) * width])
          if isPast(key) { high = middle } else { low = middle + 1 }
        }
        return low
      }
    }

    /// The child a row belongs under.
    func childIndex(for row: Row, in order: OrderedRows) -> Int {
      firstSeparator { order.compare(key: $0, row) > 0 }
    }

    func makeChildUnique(_ child: Int) {
      if !isKnownUniquelyReferenced(&children[child]) { children[child] = children[child].copy() }
    }

    /// After `children[child]` lost a row: drops it when empty, or merges it with a
    /// neighbour when it is under a quarter full and the two fit in three quarters of a node.
    func rebalance(_ child: Int) {
      let size = children[child].size
      if size == 0 {
        children.remove(at: child)
        counts.remove(at: child)
        if !separators.isEmpty {
          let gone = Swift.max(0, child - 1)
          separators.removeSubrange(gone * width..<(gone + 1) * width)
        }
        return
      }
      guard size < OrderedRows.capacity / 4, children.count > 1 else { return }
      let left = child + 1 < children.count ? child : child - 1
      guard children[left].size + children[left + 1].size <= OrderedRows.capacity * 3 / 4 else { return }
      makeChildUnique(left)
      let (into, from) = (children[left], children[left + 1])
      if into.children.isEmpty {
        into.rows.append(contentsOf: from.rows)
      } else {
        into.separators.append(contentsOf: separators[left * width..<(left + 1) * width])
        into.separators.append(contentsOf: from.separators)
        into.children.append(contentsOf: from.children)
        into.counts.append(contentsOf: from.counts)
      }
      into.count += from.count
      counts[left] += counts[left + 1]
      children.remove(at: left + 1)
      counts.remove(at: left + 1)
      separators.removeSubrange(left * width..<(left + 1) * width)
    }

    /// Rows in a leaf, children in an internal node.
    private var size: Int { children.isEmpty ? rows.count : children.count }
  }
}

/// The rows of an index order between two bounds, each a prefix of the order's fields.
struct KeyRange: Sendable, Equatable {
  /// A bound: values for the first fields of the order, and whether rows equal to them on
  /// those fields are in the range.
  struct Bound: Sendable, Equatable {
    var values: [Value]
    var inclusive: Bool
  }

  var lower: Bound?
  var upper: Bound?

  /// Every row.
  static let all = KeyRange(lower: nil, upper: nil)

  /// The rows whose first fields are `values`.
  static func equal(_ values: [Value]) -> KeyRange {
    KeyRange(lower: Bound(values: values, inclusive: true), upper: Bound(values: values, inclusive: true))
  }

  /// Whether `row` comes before every row of the range.
  func isBelow(_ row: Row, in order: OrderedRows) -> Bool {
    guard let lower else { return false }
    let relation = Self.compare(row, lower.values, order.positions)
    return lower.inclusive ? relation < 0 : relation <= 0
  }

  /// Whether `row` comes after every row of the range.
  func isAbove(_ row: Row, in order: OrderedRows) -> Bool {
    guard let upper else { return false }
    let relation = Self.compare(row, upper.values, order.positions)
    return upper.inclusive ? relation > 0 : relation >= 0
  }

  /// Whether a separator's key (see `OrderedRows.key(of:)`) comes before every row of the range.
  func isBelow(key: UnsafeBufferPointer<Value>) -> Bool {
    guard let lower else { return false }
    let relation = Self.compare(key: key, lower.values)
    return lower.inclusive ? relation < 0 : relation <= 0
  }

  /// Whether a separator's key comes after every row of the range.
  func isAbove(key: UnsafeBufferPointer<Value>) -> Bool {
    guard let upper else { return false }
    let relation = Self.compare(key: key, upper.values)
    return upper.inclusive ? relation > 0 : relation >= 0
  }

  private static func compare(key: UnsafeBufferPointer<Value>, _ values: [Value]) -> Int {
    values.withUnsafeBufferPointer { bound in
      for index in bound.indices {
        let relation = ValueOrder.compare(key[index], bound[index])
        if relation != 0 { return relation }
      }
      return 0
    }
  }

  private static func compare(_ row: Row, _ values: [Value], _ positions: [Int]) -> Int {
    row.values.withUnsafeBufferPointer { stored in
      values.withUnsafeBufferPointer { bound in
        for index in bound.indices {
          let relation = ValueOrder.compare(stored[positions[index]], bound[index])
          if relation != 0 { return relation }
        }
        return 0
      }
    }
  }
}
