import Foundation
import Testing

@testable import CofferPlist

@Suite struct XMLPlistWriterTests {
  @Test func textIsCopiedEscapedOrStoredAsDataAsXMLRequires() {
    #expect(XMLPlistWriter.classify("plain text, ünïcode 😀 \t\n") == .plain)
    #expect(XMLPlistWriter.classify("a & b") == .needsEscaping)
    #expect(XMLPlistWriter.classify("line\r") == .needsEscaping)
    #expect(XMLPlistWriter.classify("nul\0") == .notXML)
    #expect(XMLPlistWriter.classify("bell\u{7}") == .notXML)
    #expect(XMLPlistWriter.classify("non-character \u{FFFE}") == .notXML)
    #expect(XMLPlistWriter.classify("non-character \u{FFFF}") == .notXML)
    #expect(XMLPlistWriter.classify("replacement \u{FFFD}") == .plain)
  }

  @Test func everyKindOfTextReadsBackExactly() throws {
    for text in ["plain", "<a> & \"b\"", "cr\r\nlf", "nul\0x", "\u{FFFE}", "e\u{301}", ""] {
      var writer = XMLPlistWriter()
      writer.bytes.append(contentsOf: XMLPlistWriter.header)
      writer.write(.dict([("k", .string(text))]), depth: 0)
      writer.bytes.append(contentsOf: XMLPlistWriter.footer)
      let value = try XMLPlistReader.parse(Data(writer.bytes))
      let stored = value["k"]
      switch stored {
      case .string(let read)?: #expect(read.utf8.elementsEqual(text.utf8), "\(text.debugDescription)")
      case .data(let data)?: #expect(data == Data(text.utf8), "\(text.debugDescription)")
      default: Issue.record("unexpected \(String(describing: stored))")
      }
    }
  }
}
