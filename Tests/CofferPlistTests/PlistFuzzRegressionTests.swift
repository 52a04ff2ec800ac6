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

  /// `fuzz-binary-plist`'s input (`crash-1234610c…`): the seed of every kind with its `info`
  /// document pointed at a data object holding the bytes `10 AA 41 31 61 22` — not UTF-8. It was
  /// read as a document, and the writer, which writes a document as a string, replaced the
  /// byte: the next write changed the value. A document is JSON, so such data is now refused.
  static let documentThatIsNotUTF8 = """
    YnBsaXN0MDBWZm9ybWF0V3ZlcnNpb25cY29mZmVyLXBsaXN0EAHSAAAAAAAAAAEAAAACAAAAA1ZTYW1wbGVXaWRGaWVsZFZm
    aWVsZHNXaW5kZXhlc1JpZFRuYW1lVGtpbmRYb3B0aW9uYWxSaWRTaW50CNMAAAAKAAAACwAAAAwAAAANAAAADgAAAA9UbmFt
    ZVRraW5kWG9wdGlvbmFsVG5hbWVWc3RyaW5nCNMAAAARAAAAEgAAABMAAAAUAAAAFQAAABZUbmFtZVRraW5kWG9wdGlvbmFs
    VXNjb3JlVmRvdWJsZQnTAAAAGAAAABkAAAAaAAAAGwAAABwAAAAdVG5hbWVUa2luZFhvcHRpb25hbFdkZWZhdWx0VGRvbmVU
    Ym9vbAgI1AAAAB8AAAAgAAAAIQAAACIAAAAjAAAAJAAAACUAAAAmVG5hbWVUa2luZFhvcHRpb25hbFVjb3VudFNpbnQJ0wAA
    ACgAAAApAAAAKgAAACsAAAAsAAAALVRuYW1lVGtpbmRYb3B0aW9uYWxUYmxvYlVieXRlcwnTAAAALwAAADAAAAAxAAAAMgAA
    ADMAAAA0VG5hbWVUa2luZFhvcHRob25hbFdkZWZhdWx0VHdoZW5UZGF0ZQgQANQAAAA2AAAANwAAADgAAAA5AAAAOgAAADsA
    AAA8AAAAPVRuYW1lVGtpbmRYb3B0aW9uYWxTcmVmVHV1aWQJ0wAAAD8AAABAAAAAQQAAAEIAAABDAAAARFRuYW1lVGtpbmRY
    b3B0aW9uYWxUaW5mb1hkb2N1bWVudAnTAAAARgAAAEcAAABIAAAASQAAAEoAAABLVG5hbWVUa2luZFhvcHRpb25hbFRub3Rl
    VnN0cmluZwnTAAAATQAAAE4AAABPAAAAUAAAAFEAAABSqgAAABAAAAAXAAAAHgAAACcAAAAuAAAANQAAAD4AAABFAAAATAAA
    AFNWZmllbGRzVnVuaXF1ZVRuYW1loQAAAFcJ0gAAAFUAAABWAAAAWAAAAFlWZmllbGRzVnVuaXF1ZVR3aGVuVXNjb3JlogAA
    AF0AAABeCNIAAABbAAAAXAAAAF8AAABgogAAAFoAAABh0wAAAAYAAAAHAAAACAAAAAkAAABUAAAAYtEAAAAFAAAAY1ZTYW1w
    bGVSaWRUbmFtZVVzY29yZVRkb25lVWNvdW50VGJsb2JUd2hlblNyZWZUaW5mb1Rub3Rl2gAAAGYAAABnAAAAaAAAAGkAAABq
    AAAAawAAAGwAAABtAAAAbgAAAG8AAABxAAAAcgAAAHMAAAB0AAAAdQAAAHYAAAB3AAAAeAAAAHkAAAB6EAFVZmlyc3QjQAQA
    AAAAAAAJE//////////5QwAB/xMABjedoF1CQF8QJDAxMDIwMzA0LTA1MDYtMDcwOC0wOTBBLTBCMEMwRDBFMEYxMKpBMWEi
    OlsxLDJdfWwAbgBhAO8AdgBlACAAYwBhAGYA6QAgJhXUAAAAZgAAAGcAAABpAAAAbAAAAHwAAAB9AAAAfgAAAH8T/////eeO
    AFdj5nMAZW9uZAgT/////zTwvcCiAAAAcAAAAHvRAAAAZQAAAIBbQ29mZmVyU3RvcmVXc2NoZW1hc1hlbnRpdGllc9MAAACC
    AAAAgwAAAIQAAAAEAAAAZAAAAIEAAAAIAAAADwAAABcAAAAkAAAAJgAAADcAAAA+AAAARgAAAE0AAABVAAAAWAAAAF0AAABi
    AAAAawAAAG4AAAByAAAAcwAAAIwAAACRAAAAlgAAAJ8AAACkAAAAqwAAAKwAAADFAAAAygAAAM8AAADYAAAA3gAAAOUAAADm
    AAAA/wAAAQQAAAEJAAABEgAAARoAAAEfAAABJAAAASUAAAEmAAABRwAAAUwAAAFRAAABWgAAAWAAAAFkAAABZQAAAX4AAAGD
    AAABiAAAAZEAAAGWAAABnAAAAZ0AAAG2AAABuwAAAcAAAAHJAAAB0QAAAdYAAAHbAAAB3AAAAd4AAAH/AAACBAAAAgkAAAIS
    AAACFgAAAhsAAAIcAAACNQAAAjoAAAI/AAACSAAAAk0AAAJWAAACVwAAAnAAAAJ1AAACegAAAoMAAAKIAAACjwAAApAAAAKp
    AAAC0gAAAtkAAALgAAAC5QAAAuoAAALrAAAC/AAAAwMAAAMKAAADDwAAAxUAAAMeAAADHwAAAzAAAAM5AAADUgAAA1sAAANi
    AAADZQAAA2oAAANwAAADdQAAA3sAAAOAAAADhQAAA4kAAAOOAAADkwAAA+QAAAPmAAAD7AAAA/UAAAP2AAAD/wAABAMAAAQM
    AAAEMAAABD8AAARYAAAEeQAABIIAAASKAAAEiwAABJQAAASdAAAEpgAABLIAAAS6AAAEwwAAAAAAAAQEAAAAAAAAAIYAAAAA
    AAAAhQAAAAAAAATc
    """

  @Test func aDocumentStoredAsDataThatIsNotUTF8IsRefused() throws {
    let bytes = try #require(
      Data(base64Encoded: Self.documentThatIsNotUTF8, options: .ignoreUnknownCharacters))
    let error = #expect(throws: CofferError.self) { try PlistFuzzing.decodeBinary(Array(bytes)) }
    #expect(error?.code == .corruptStore)
    #expect(error?.message.contains("'info'") == true, "\(String(describing: error))")
  }

  @Test func anXMLDocumentStoredAsDataThatIsNotUTF8IsRefused() throws {
    let text = """
      <?xml version="1.0" encoding="UTF-8"?>
      <plist version="1.0">
      <dict>
      <key>CofferStore</key><dict><key>format</key><string>coffer-plist</string>\
      <key>version</key><integer>1</integer></dict>
      <key>schemas</key><dict><key>Note</key><dict>
      <key>idField</key><string>id</string>
      <key>fields</key><array>
      <dict><key>name</key><string>id</string><key>kind</key><string>int</string><key>optional</key><false/></dict>
      <dict><key>name</key><string>info</string><key>kind</key><string>document</string>\
      <key>optional</key><true/></dict>
      </array>
      <key>indexes</key><array/>
      </dict></dict>
      <key>entities</key><dict><key>Note</key><array>
      <dict><key>id</key><integer>1</integer><key>info</key><data>/w==</data></dict>
      </array></dict>
      </dict>
      </plist>

      """
    #expect(throws: CofferError.self) { try PlistFuzzing.decodeXML(Array(text.utf8)) }
  }
}
