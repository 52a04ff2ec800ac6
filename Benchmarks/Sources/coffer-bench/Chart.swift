import Foundation

/// An SVG bar chart of the ratios at one size: one group per operation, one bar per comparison,
/// on a logarithmic axis with 1x (parity) marked.
enum Chart {
  static let shownPairs = [0, 1, 3, 5, 6]
  static let colors = ["#1f77b4", "#9ecae1", "#2ca02c", "#ff7f0e", "#9467bd"]

  static func svg(_ results: [Result], rows: Int) -> String {
    let operations = Operation.allCases.filter { $0 != .fileSize }
    let pairs = shownPairs.map { SuiteReport.pairs[$0] }
    let width = 860.0
    let left = 230.0
    let right = 30.0
    let barHeight = 11.0
    let groupHeight = Double(pairs.count) * barHeight + 14
    let top = 60.0
    let legendRows = Double((pairs.count + 3) / 4)
    let plotBottom = top + Double(operations.count) * groupHeight + 10
    let height = plotBottom + 40 + 20 * legendRows
    let lowest = -3.0  // log2 of the axis ends: 1/8x … 32x
    let highest = 5.0
    func x(_ ratio: Double) -> Double {
      let clamped = min(max(log2(ratio), lowest), highest)
      return left + (clamped - lowest) / (highest - lowest) * (width - left - right)
    }
    var svg = [
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" "
        + "font-family=\"sans-serif\" font-size=\"12\">",
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
      "<text x=\"\(Int(left))\" y=\"24\" font-size=\"15\">Coffer ÷ baseline at \(rows.formatted()) rows "
        + "(log scale; left of 1x is faster)</text>",
    ]
    for power in Int(lowest)...Int(highest) {
      let ratio = pow(2, Double(power))
      let position = x(ratio)
      let label = power < 0 ? "1/\(1 << -power)x" : "\(1 << power)x"
      svg.append(
        "<line x1=\"\(position)\" y1=\"\(top - 10)\" x2=\"\(position)\" y2=\"\(plotBottom)\" "
          + "stroke=\"\(power == 0 ? "#333" : "#ddd")\" stroke-width=\"\(power == 0 ? 1.5 : 1)\"/>")
      svg.append("<text x=\"\(position)\" y=\"\(plotBottom + 15)\" text-anchor=\"middle\">\(label)</text>")
    }
    for (group, operation) in operations.enumerated() {
      let groupTop = top + Double(group) * groupHeight
      svg.append(
        "<text x=\"\(left - 8)\" y=\"\(groupTop + groupHeight / 2)\" text-anchor=\"end\">\(operation.rawValue)</text>"
      )
      for (index, pair) in pairs.enumerated() {
        let rowsForOperation = operation == .peakMemory ? 1_000_000 : rows
        guard let ratio = SuiteReport.ratio(results, pair, operation, rows: rowsForOperation) else {
          continue
        }
        let y = groupTop + Double(index) * barHeight
        let start = min(x(1), x(ratio))
        svg.append(
          "<rect x=\"\(start)\" y=\"\(y)\" width=\"\(max(abs(x(ratio) - x(1)), 1))\" height=\"\(barHeight - 2)\" "
            + "fill=\"\(colors[index])\"><title>\(pair.title): \(SuiteReport.format(ratio))</title></rect>")
      }
    }
    for (index, pair) in pairs.enumerated() {
      // Four entries to a legend row.
      let legendX = 20.0 + Double(index % 4) * 210
      let legendY = height - 20 * legendRows - 5 + Double(index / 4) * 20
      svg.append(
        "<rect x=\"\(legendX)\" y=\"\(legendY)\" width=\"12\" height=\"12\" fill=\"\(colors[index])\"/>")
      svg.append("<text x=\"\(legendX + 18)\" y=\"\(legendY + 10)\">\(pair.title)</text>")
    }
    svg.append("</svg>")
    return svg.joined(separator: "\n") + "\n"
  }
}
