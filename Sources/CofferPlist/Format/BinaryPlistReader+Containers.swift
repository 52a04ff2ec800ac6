/// Reading containers by reference, so that large arrays of rows need not become a tree first.
extension BinaryPlistReader {
  /// The object numbers an array or dictionary refers to: for a dictionary, keys then values.
  func references(of number: Int, expecting marker: UInt8) throws -> [Int] {
    let position = try offset(of: number)
    let found = UInt8(try read(at: position, size: 1))
    guard found >> 4 == marker >> 4 else {
      throw PlistSyntaxError(
        offset: position, reason: "expected a \(marker == 0xD0 ? "dictionary" : "array")")
    }
    let (count, start) = try length(found, at: position)
    let total = marker == 0xD0 ? count * 2 : count
    try check(at: start, size: total * referenceSize)
    var references: [Int] = []
    references.reserveCapacity(total)
    for index in 0..<total {
      references.append(Int(Self.readUInt(bytes, at: start + index * referenceSize, size: referenceSize)))
    }
    return references
  }

  /// A dictionary's entries with their values as object numbers.
  func entries(of number: Int) throws -> [(key: String, value: Int)] {
    let references = try references(of: number, expecting: 0xD0)
    let count = references.count / 2
    var entries: [(key: String, value: Int)] = []
    entries.reserveCapacity(count)
    for index in 0..<count {
      guard case .string(let key) = try value(references[index]) else {
        throw PlistSyntaxError(offset: try offset(of: number), reason: "a dictionary key is not a string")
      }
      entries.append((key, references[count + index]))
    }
    return entries
  }

  /// An object and everything under it as a value tree.
  func value(_ number: Int) throws -> PlistValue {
    var visiting = Set<Int>()
    return try object(number, depth: 0, visiting: &visiting)
  }
}
