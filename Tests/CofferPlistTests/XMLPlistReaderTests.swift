import Foundation
import Testing

@testable import CofferPlist

@Suite struct XMLPlistReaderTests {
  func parse(_ body: String) throws -> PlistValue {
    try XMLPlistReader.parse(Data("<?xml version=\"1.0\"?>\n<plist version=\"1.0\">\(body)</plist>\n".utf8))
  }

  @Test func textWithEntitiesCDATAAndLineEndsReadsAsXMLSays() throws {
    #expect(try parse("<string>a &amp; b &lt;c&gt; &#233;&#x1F600;</string>") == .string("a & b <c> é😀"))
    #expect(try parse("<string><![CDATA[<raw> & stuff]]></string>") == .string("<raw> & stuff"))
    #expect(try parse("<string>one\r\ntwo\rthree&#13;</string>") == .string("one\ntwo\nthree\r"))
    #expect(try parse("<string/>") == .string(""))
  }

  @Test func integersInEveryFormToolsWrite() throws {
    #expect(try parse("<integer>-9223372036854775808</integer>") == .integer(Int64.min))
    #expect(try parse("<integer>9223372036854775807</integer>") == .integer(Int64.max))
    #expect(try parse("<integer> 42 </integer>") == .integer(42))
    #expect(try parse("<integer>0x1F</integer>") == .integer(31))
    #expect(throws: PlistSyntaxError.self) { try parse("<integer>9223372036854775808</integer>") }
    #expect(throws: PlistSyntaxError.self) { try parse("<integer>12a</integer>") }
  }

  @Test func commentsAndEmptyContainersInsideStructures() throws {
    let value = try parse(
      "<dict><!-- note --><key>a</key><array/><key>b</key><dict/><key>c</key><true/><key>d</key><false></false></dict>"
    )
    #expect(value == .dict([("a", .array([])), ("b", .dict([])), ("c", .bool(true)), ("d", .bool(false))]))
  }

  @Test func malformedDocumentsAreErrorsNotCrashes() {
    for body in [
      "<dict><key>a</key>", "<string>never closed", "<array><string>x</array>",
      "<dict><string>x</string></dict>",
      "<unknown/>", "<string>a</strin>", "<integer></integer>", "<data>!!!</data>", "<dict><key>a</key><",
    ] {
      #expect(throws: PlistSyntaxError.self, "\(body)") { try parse(body) }
    }
    #expect(throws: PlistSyntaxError.self) {
      try XMLPlistReader.parse(Data("<plist><string>x</string>".utf8))
    }
  }
}
