@_spi(Backend) import Coffer
@_spi(Fuzzing) import CofferPlist
import CofferTestSupport
import Foundation
import Testing

/// Inputs the fuzz targets of `Fuzz/` (issue 21) found a bug with, each reduced to what it
/// takes; every test failed before its fix.
@Suite struct PlistFuzzRegressionTests {
  /// An XML store (`fuzz-xml-plist` turned a field name of the seed into `i\0\0\0\0nfo`): the
  /// XML reader takes the raw NULs, and the writer, which cannot put a NUL in XML text, writes
  /// such a name as `<data>` — which the schema reader refused, so the store it wrote did not
  /// open again.
  static let fieldNameWithNUL = """
    <?xml version="1.0" encoding="UTF-8"?>
    <plist version="1.0">
    <dict>
    <key>CofferStore</key><dict><key>format</key><string>coffer-plist</string>\
    <key>version</key><integer>1</integer></dict>
    <key>schemas</key><dict><key>Note</key><dict>
    <key>idField</key><string>id</string>
    <key>fields</key><array>
    <dict><key>name</key><string>id</string><key>kind</key><string>int</string><key>optional</key><false/></dict>
    <dict><key>name</key><string>i\u{0}nfo</string><key>kind</key><string>string</string>\
    <key>optional</key><true/></dict>
    </array>
    <key>indexes</key><array/>
    </dict></dict>
    <key>entities</key><dict><key>Note</key><array>
    <dict><key>id</key><integer>1</integer><key>i\u{0}nfo</key><string>kept</string></dict>
    </array></dict>
    </dict>
    </plist>

    """

  @Test func aFieldNameXMLCannotHoldIsWrittenSoThatItReadsBack() throws {
    let image = try PlistFuzzing.decodeXML(Array(Self.fieldNameWithNUL.utf8))
    #expect(image.schemas.first?.fields.map(\.name) == ["id", "i\u{0}nfo"])
    for format in PlistBackend.Format.allCases {
      let bytes = PlistFuzzing.encode(image, format: format)
      let again = try format == .xml ? PlistFuzzing.decodeXML(bytes) : PlistFuzzing.decodeBinary(bytes)
      #expect(again.schemas == image.schemas, "written as \(format)")
      #expect(again.rows == image.rows, "written as \(format)")
    }
  }

  @Test func aStoreWithAControlCharacterInAFieldNameReopensAsXML() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let schema = try EntitySchema(
      name: "Note", fields: [Field("id", .int), Field("tab\u{1}bed", .string, isOptional: true)],
      idField: "id")
    let backend = try PlistBackend(path: path, configuration: .init(format: .xml))
    try await backend.prepare([schema])
    try await backend.close()
    let reopened = try PlistBackend(path: path)
    #expect(try await reopened.storedSchemas() == [schema])
    try await reopened.close()
  }

  /// A migration record whose time is the largest millisecond count a file can hold: writing
  /// the header again converted the time back to milliseconds with a trapping conversion, so
  /// the process crashed on the first write after opening such a file.
  @Test func aMigrationTimeAtTheEndOfTheRangeIsWrittenAgain() throws {
    let text = """
      <?xml version="1.0" encoding="UTF-8"?>
      <plist version="1.0">
      <dict>
      <key>CofferStore</key><dict><key>format</key><string>coffer-plist</string>\
      <key>version</key><integer>1</integer><key>migrations</key><array><dict>\
      <key>name</key><string>late</string><key>position</key><integer>0</integer>\
      <key>appliedAt</key><integer>9223372036854775807</integer><key>rowsTouched</key><integer>0</integer>\
      </dict></array></dict>
      <key>schemas</key><dict/>
      <key>entities</key><dict/>
      </dict>
      </plist>

      """
    let image = try PlistFuzzing.decodeXML(Array(text.utf8))
    for format in PlistBackend.Format.allCases {
      let bytes = PlistFuzzing.encode(image, format: format)
      let again = try format == .xml ? PlistFuzzing.decodeXML(bytes) : PlistFuzzing.decodeBinary(bytes)
      #expect(again.migrations.map(\.name) == ["late"])
    }
  }
}
