/// Dates in an export: ISO 8601 in UTC with six fractional digits
/// (`2026-11-25T17:58:14.123456Z`), exact to the microsecond like every stored date. Years
/// outside 0000…9999 take a sign and as many digits as they need (`+12345-01-01T…`).
package enum ExportDate {
  /// The text of a number of microseconds since 1970.
  package static func text(microseconds: Int64) -> String {
    let (seconds, fraction) = floorDivision(microseconds, 1_000_000)
    let (days, secondOfDay) = floorDivision(seconds, 86_400)
    let (year, month, day) = civil(fromDays: days)
    var text = ""
    if year < 0 {
      text += "-" + padded(-year, 4)
    } else if year > 9999 {
      text += "+" + padded(year, 4)
    } else {
      text += padded(year, 4)
    }
    text += "-" + padded(month, 2) + "-" + padded(day, 2)
    text += "T" + padded(secondOfDay / 3600, 2) + ":" + padded(secondOfDay / 60 % 60, 2) + ":"
    text += padded(secondOfDay % 60, 2) + "." + padded(fraction, 6) + "Z"
    return text
  }

  /// The microseconds since 1970 of a text in the form ``text(microseconds:)`` writes, or `nil`
  /// for any other text (another form, an invalid calendar date, or out of range).
  package static func microseconds(text: String) -> Int64? {
    var bytes = Array(text.utf8)[...]
    var sign: Int64 = 1
    if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
      sign = first == UInt8(ascii: "-") ? -1 : 1
      bytes = bytes.dropFirst()
    }
    guard let dash = bytes.firstIndex(of: UInt8(ascii: "-")), dash - bytes.startIndex >= 4,
      let year = number(bytes[bytes.startIndex..<dash])
    else { return nil }
    let rest = Array(bytes[(dash + 1)...])
    // MM-DDTHH:MM:SS.ffffffZ
    guard rest.count == 22, rest[2] == UInt8(ascii: "-"), rest[5] == UInt8(ascii: "T"),
      rest[8] == UInt8(ascii: ":"), rest[11] == UInt8(ascii: ":"), rest[14] == UInt8(ascii: "."),
      rest[21] == UInt8(ascii: "Z"),
      let month = number(rest[0..<2]), let day = number(rest[3..<5]), let hour = number(rest[6..<8]),
      let minute = number(rest[9..<11]), let second = number(rest[12..<14]),
      let fraction = number(rest[15..<21]),
      (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: sign * year),
      hour < 24, minute < 60, second < 60
    else { return nil }
    let days = Int128(days(fromCivil: sign * year, month, day))
    let seconds = days * 86_400 + Int128(hour * 3600 + minute * 60 + second)
    return Int64(exactly: seconds * 1_000_000 + Int128(fraction))
  }

  private static func number(_ digits: some Collection<UInt8>) -> Int64? {
    guard !digits.isEmpty, digits.count <= 12 else { return nil }
    var value: Int64 = 0
    for digit in digits {
      guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
      value = value * 10 + Int64(digit - UInt8(ascii: "0"))
    }
    return value
  }

  private static func padded(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
  }

  private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
    let quotient = value / divisor
    let remainder = value % divisor
    return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
  }

  private static func daysIn(month: Int64, year: Int64) -> Int64 {
    switch month {
    case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
  }

  /// Year, month and day of a count of days since 1970-01-01 in the proleptic Gregorian
  /// calendar, counted in 400-year eras of 146,097 days with years starting in March.
  package static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
    let shifted = days + 719_468  // days since 0000-03-01
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthFromMarch = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
    let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  /// The count of days since 1970-01-01 of a proleptic Gregorian date: the inverse of
  /// ``civil(fromDays:)``.
  package static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
    let marchYear = month <= 2 ? year - 1 : year
    let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
    let yearOfEra = marchYear - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }
}
