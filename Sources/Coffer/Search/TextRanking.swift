import Foundation

/// Okapi BM25, the relevance of a row to the words of a ``Filter/matches(field:query:)``.
///
/// For a field, over the rows in which it is not null (`N` of them, with `avgdl` words on
/// average), a row whose field has `dl` words scores, for each distinct term `t` of the query
/// that is not under a `NOT` (a word, a prefix or a phrase, each one term):
///
/// ```
/// idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
/// score += idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
/// ```
///
/// with `k1 = 1.2` and `b = 0.75`, where `tf` is how many times the term occurs in the row's
/// field (a prefix: how many words start with it; a phrase: how many times the words occur
/// in a row) and `df(t)` in how many rows it occurs at least once. Terms are added in the order
/// they first appear in the query, so every backend computes the same `Double`. When `avgdl`
/// is 0, `dl / avgdl` counts as 1.
package enum TextRanking {
  /// BM25's term-frequency saturation.
  package static var k1: Double { 1.2 }
  /// BM25's length normalization.
  package static var b: Double { 0.75 }

  /// The statistics of one field over an entity's rows.
  package struct FieldStatistics: Sendable {
    /// Rows in which the field is not null.
    package var rows = 0
    /// Words in those rows together.
    package var words = 0

    package init() {}

    /// The average number of words.
    package var averageLength: Double { rows == 0 ? 0 : Double(words) / Double(rows) }
  }

  /// The inverse document frequency of a term in `documentFrequency` of `statistics.rows` rows.
  package static func idf(documentFrequency: Int, of statistics: FieldStatistics) -> Double {
    let n = Double(statistics.rows)
    let df = Double(documentFrequency)
    return log(1 + (n - df + 0.5) / (df + 0.5))
  }

  /// One term's share of a row's score.
  package static func termScore(idf: Double, frequency: Int, length: Int, averageLength: Double) -> Double {
    guard frequency > 0 else { return 0 }
    let tf = Double(frequency)
    let relativeLength = averageLength == 0 ? 1 : Double(length) / averageLength
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * relativeLength))
  }
}
