import Coffer
import Foundation
import Testing

@testable import CofferPlist

/// The XML store reader decodes rows straight from the bytes when the header and schemas come
/// first (Coffer's order) and through value trees otherwise (a tool that sorts keys). These
/// tests feed both ways the same rows, in the forms other tools write, and compare.
@Suite struct XMLStoreDecoderTests {
  let schema = try! EntitySchema(
    name: "Item",
    fields: [
      Field("id", .int), Field("n", .int, isOptional: true), Field("flag", .bool, isOptional: true),
      Field("s", .string, isOptional: true), Field("d", .date, isOptional: true),
      Field("x", .double, isOptional: true), Field("text", .string, isOptional: true),
      Field("größe", .int, isOptional: true), Field("req", .string, default: .string("dflt")),
    ],
    idField: "id")

  /// A store document holding `entities` as its entities value, in Coffer's key order or with
  /// the entities before the schemas.
  func document(_ entities: String, entitiesFirst: Bool) -> [UInt8] {
    func xml(_ value: PlistValue) -> String {
      var writer = XMLPlistWriter()
      writer.write(value, depth: 1)
      return String(decoding: writer.bytes, as: UTF8.self)
    }
    let header = "<key>CofferStore</key>\n" + xml(StoreLayout.header())
    let schemas = "<key>schemas</key>\n" + xml(.dict([(schema.name, StoreLayout.plist(schema))]))
    let rows = "<key>entities</key>\n" + entities
    let body = entitiesFirst ? header + rows + schemas : header + schemas + rows
    return Array(
      ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\">\n<dict>\n" + body
        + "</dict>\n</plist>\n").utf8)
  }

  let file = StoreFile(path: "/nonexistent/store.plist")

  /// What reading gives, as text: the rows, or the error.
  func outcome(_ read: () throws -> StoreReader.Loaded) -> String {
    do {
      return "\(try read().rows.map { "\($0.entity): \($0.rows)" })"
    } catch {
      return "\(error)"
    }
  }

  /// The rows of `Item`, read straight from the bytes; fails the test unless reading the same
  /// document as one tree, and reading it with the entities first, give the same rows.
  func rows(_ entities: String) throws -> [Row] {
    let data = document(entities, entitiesFirst: false)
    let direct = try StoreReader.decodeXML(data, file: file)
    let tree = try StoreReader.loadXMLTree(data, file: file)
    let sorted = try StoreReader.load(document(entities, entitiesFirst: true), file: file)
    #expect(direct.rows.map(\.entity) == tree.rows.map(\.entity))
    #expect(direct.rows.map(\.rows) == tree.rows.map(\.rows))
    #expect(direct.rows.map(\.rows) == sorted.rows.map(\.rows))
    return direct.rows.first?.rows ?? []
  }

  /// The message of the error opening a document fails with; fails the test unless reading it
  /// as one tree fails the same way, at the same byte.
  func failure(_ entities: String) -> String? {
    let data = document(entities, entitiesFirst: false)
    #expect(
      outcome { try StoreReader.loadXML(data, file: file) }
        == outcome { try StoreReader.loadXMLTree(data, file: file) })
    for document in [document(entities, entitiesFirst: true), data] {
      do {
        _ = try StoreReader.load(document, file: file)
        Issue.record("reading should have failed")
      } catch let error as CofferError {
        #expect(error.code == .corruptStore)
        #expect(error.path == file.path)
        if document == data { return error.message }
      } catch {
        Issue.record("unexpected error \(error)")
      }
    }
    return nil
  }

  @Test func rowsInTheFormsToolsWriteReadTheSameEitherWay() throws {
    let rows = try rows(
      """
      <dict>
        <key>Item</key>
        <array>
          <dict><key>id</key><integer>1</integer><key>n</key><integer>-42</integer><key>flag</key><true/><key>s</key><string>plain</string><key>d</key><integer>1700000000000001</integer><key>x</key><real>2.5</real><key>größe</key><integer>7</integer></dict>
          <dict>
            <key>x</key><integer>3</integer>
            <key>id</key><integer> 0x2 </integer>
            <key>flag</key><true></true>
            <key>s</key><string>a &amp; b &lt;c&gt; &#233;&#x1F600; end&#13;</string>
            <key>d</key><date>2001-01-01T00:00:00Z</date>
            <key>unknown</key><dict><key>z</key><array><integer>1</integer></array></dict>
            <key>gro\u{0308}ße</key><integer>8</integer>
          </dict>
          <!-- a comment between rows -->
          <dict>\r\n\t<key>id</key>\r\n\t<integer>3</integer>\r\n<key>s</key><string><![CDATA[<raw> & more]]></string><key>te&#x78;t</key><string/><key>flag</key><false/><key>n</key><integer>9223372036854775807</integer></dict>
          <dict><key>id</key><integer>4</integer><key>s</key><data>aGVsbG8=</data><!-- c --><key>n</key><integer>+5</integer><key>req</key><string>given</string></dict>
          <dict><key>id</key><integer>5</integer><key>s</key><string>one\r\ntwo</string><key>s</key><string>last wins</string></dict>
        </array>
      </dict>

      """)
    try #require(rows.count == 5)
    let s = schema.position(of: "s")!
    #expect(rows[0][schema.position(of: "n")!] == .int(-42))
    #expect(rows[0][schema.position(of: "d")!] == .date(Date(timeIntervalSince1970: 1_700_000_000.000001)))
    #expect(rows[0][schema.position(of: "größe")!] == .int(7))
    #expect(rows[1][0] == .int(2))
    #expect(rows[1][schema.position(of: "x")!] == .double(3))
    #expect(rows[1][s] == .string("a & b <c> é😀 end\r"))
    #expect(rows[1][schema.position(of: "d")!] == .date(Date(timeIntervalSince1970: 978_307_200)))
    #expect(rows[1][schema.position(of: "größe")!] == .int(8))
    #expect(rows[2][s] == .string("<raw> & more"))
    #expect(rows[2][schema.position(of: "text")!] == .string(""))
    #expect(rows[2][schema.position(of: "flag")!] == .bool(false))
    #expect(rows[2][schema.position(of: "n")!] == .int(.max))
    #expect(rows[2][schema.position(of: "req")!] == .string("dflt"))
    #expect(rows[3][s] == .string("hello"))
    #expect(rows[3][schema.position(of: "n")!] == .int(5))
    #expect(rows[3][schema.position(of: "req")!] == .string("given"))
    #expect(rows[4][s] == .string("last wins"))
  }

  @Test func rowsThatLeaveTheFormatOfTheRowsBeforeThemReadTheSame() throws {
    func regular(_ id: Int) -> String {
      "\t\t\t<dict>\n\t\t\t\t<key>id</key>\n\t\t\t\t<integer>\(id)</integer>\n\t\t\t\t<key>s</key>\n"
        + "\t\t\t\t<string>row \(id)</string>\n\t\t\t\t<key>n</key>\n\t\t\t\t<integer>\(id * 10)</integer>\n\t\t\t</dict>\n"
    }
    let odd = [
      // More white space after a key than the rows before had.
      "\t\t\t<dict>\n\t\t\t\t<key>id</key>\n\t\t\t\t\t\t<integer>100</integer>\n\t\t\t</dict>\n",
      // The same white space, but another key in the first place, and a comment before a value.
      "\t\t\t<dict>\n\t\t\t\t<key>n</key>\n\t\t\t\t<!-- c --><integer>7</integer>\n\t\t\t\t<key>id</key>\n\t\t\t\t<integer>101</integer>\n\t\t\t</dict>\n",
      // A key that is a prefix of another field's name, and one that names no field.
      "\t\t\t<dict>\n\t\t\t\t<key>id</key>\n\t\t\t\t<integer>102</integer>\n\t\t\t\t<key>x</key><real>1</real><key>xx</key><integer>5</integer>\n\t\t\t</dict>\n",
      // Fewer keys than the rows before, ending where they had more.
      "\t\t\t<dict>\n\t\t\t\t<key>id</key>\n\t\t\t\t<integer>103</integer>\n\t\t\t</dict>\n",
    ]
    var body = (1...3).map(regular).joined()
    for row in odd { body += row + regular(body.count) }
    let rows = try rows("<dict>\n\t\t<key>Item</key>\n\t\t<array>\n" + body + "\t\t</array>\n\t</dict>\n")
    #expect(rows.count == 3 + 2 * odd.count)
    let n = schema.position(of: "n")!
    #expect(rows[3][0] == .int(100) && rows[3][n] == .null)
    #expect(rows[5][0] == .int(101) && rows[5][n] == .int(7))
    #expect(rows[7][0] == .int(102) && rows[7][schema.position(of: "x")!] == .double(1))
    #expect(rows[9][0] == .int(103) && rows[9][schema.position(of: "s")!] == .null)
    #expect(rows[10][schema.position(of: "s")!] != .null)
  }

  @Test func emptyFormsOfTheEntitiesAndRowsRead() throws {
    #expect(try rows("<dict/>\n").isEmpty)
    #expect(try rows("<dict><key>Item</key><array/></dict>\n").isEmpty)
    let empty = try StoreReader.load(
      document("<dict><key>Item</key><array/></dict>\n", entitiesFirst: false), file: file)
    #expect(empty.rows.map(\.entity) == ["Item"])
    // A row with no values fails only for want of its required id.
    #expect(
      failure("<dict><key>Item</key><array><dict/></array></dict>\n")?.contains("required field 'id'") == true
    )
  }

  @Test func rowsThatBreakTheLayoutNameTheRowAndField() {
    #expect(
      failure(
        "<dict><key>Item</key><array><dict><key>id</key><integer>1</integer></dict><string>x</string></array></dict>"
      )?
      .contains("row 1 of 'Item' is a string, not a dictionary") == true)
    #expect(
      failure(
        "<dict><key>Item</key><array><dict><key>id</key><integer>1</integer><key>n</key><string>7</string></dict></array></dict>"
      )?
      .contains("row 0 of 'Item' has string for field 'n', which holds int") == true)
    #expect(
      failure("<dict><key>Item</key><array><dict><key>id</key><true/></dict></array></dict>")?.contains(
        "'id'") == true)
    #expect(
      failure("<dict><key>Other</key><array/></dict>")?.contains("'Other' has rows but no schema") == true)
    #expect(failure("<dict><key>Item</key><dict/></dict>")?.contains("'Item' is not an array") == true)
    #expect(failure("<array/>")?.contains("'entities' is not a dictionary") == true)
  }

  @Test func damagedRowsAreSyntaxErrorsNotCrashes() {
    let damaged = [
      "<dict><key>Item</key><array><dict><key>id</key><integer>1</intger></dict></array></dict>",
      "<dict><key>Item</key><array><dict><key>id</key><integer>1</integer><integer>2</integer></dict></array></dict>",
      "<dict><key>Item</key><array><dict><key>id</key><integer>1</integer></array></dict>",
      "<dict><key>Item</key><array><dict><key>id</key><integer>99999999999999999999</integer></dict></array></dict>",
      "<dict><key>Item</key><array><dict><key>s</key><string>a &bogus; b</string></dict></array></dict>",
      "<dict><key>Item</key><array><dict><key>id</key><integer>1</integer><key>s</key><string>open",
      "<dict><key>Item</key><array><dict><key>id",
      "<dict><key>Item</key><array><dict>",
    ]
    for entities in damaged {
      #expect(failure(entities)?.contains("does not parse as a property list") == true, "\(entities)")
    }
  }

  @Test func everyPrefixOfAStoreFailsCleanly() throws {
    let whole = document(
      "<dict><key>Item</key><array><dict><key>id</key><integer>1</integer><key>s</key><string>a&amp;b</string><key>flag</key><true/></dict></array></dict>\n",
      entitiesFirst: false)
    _ = try StoreReader.load(whole, file: file)
    for length in stride(from: 1, to: whole.count - 1, by: 1) {
      #expect(throws: CofferError.self) { try StoreReader.load(Array(whole.prefix(length)), file: file) }
    }
  }
}
