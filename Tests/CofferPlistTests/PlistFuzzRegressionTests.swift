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

  /// A binary store (`fuzz-binary-plist`, one bit of the seed flipped) whose date value is a
  /// NaN double: converting it to microseconds trapped and crashed the process that opened it.
  static let dateThatIsNaN = """
    YnBsaXN0MDBWZm9ybWF0V3ZlcnNpb25abWlncmF0aW9uc1xjb2ZmZXItcGxpc3QQAVRuYW1lWHBvc2l0aW9uWWFwcGxpZWRB
    dFtyb3dzVG91Y2hlZFVmaXJzdBAAEwAAAZd0INwAEAPUAAAABQAAAAYAAAAHAAAACAAAAAkAAAAKAAAACwAAAAyhAAAADdMA
    AAAAAAAAAQAAAAkAAAADAAAABAAAAA5bQ2hhdE1lc3NhZ2VaQ2hhdFRocmVhZFtEZW1vUHJvZmlsZVZTYW1wbGVXaWRGaWVs
    ZFZmaWVsZHNXaW5kZXhlc1JpZFRuYW1lVGtpbmRYb3B0aW9uYWxSaWRUdXVpZAjTAAAAGAAAABkAAAAaAAAAGwAAABwAAAAd
    VG5hbWVUa2luZFhvcHRpb25hbFh0aHJlYWRJRFR1dWlkCNMAAAAfAAAAIAAAACEAAAAiAAAAIwAAACRUbmFtZVRraW5kWG9w
    dGlvbmFsVnNlbmRlclZzdHJpbmcI0wAAACYAAAAnAAAAKAAAACkAAAAqAAAAK1RuYW1lVGtpbmRYb3B0aW9uYWxUdGV4dFZz
    dHJpbmcI0wAAAC0AAAAuAAAALwAAADAAAAAxAAAAMlRuYW1lVGtpbmRYb3B0aW9uYWxUZGF0ZVRkYXRlCNMAAAA0AAAANQAA
    ADYAAAA3AAAAOAAAADlUbmFtZVRraW5kWG9wdGlvbmFsVmlzUmVhZFRib29sCNMAAAA7AAAAPAAAAD0AAAA+AAAAPwAAAECm
    AAAAHgAAACUAAAAsAAAAMwAAADoAAABBVmZpZWxkc1Z1bmlxdWVYdGhyZWFkSURUZGF0ZaIAAABFAAAARgjSAAAAQwAAAEQA
    AABHAAAASKEAAABJ0wAAABQAAAAVAAAAFgAAABcAAABCAAAASldpZEZpZWxkVmZpZWxkc1dpbmRleGVzUmlkVG5hbWVUa2lu
    ZFhvcHRpb25hbFJpZFR1dWlkCNMAAABQAAAAUQAAAFIAAABTAAAAVAAAAFVUbmFtZVRraW5kWG9wdGlvbmFsVXRpdGxlVnN0
    cmluZwjTAAAAVwAAAFgAAABZAAAAWgAAAFsAAABcVG5hbWVUa2luZFhvcHRpb25hbFljcmVhdGVkQXRUZGF0ZQjTAAAAXgAA
    AF8AAABgAAAAYQAAAGIAAABjowAAAFYAAABdAAAAZKDTAAAATAAAAE0AAABOAAAATwAAAGUAAABmV2lkRmllbGRWZmllbGRz
    V2luZGV4ZXNSaWRUbmFtZVRraW5kWG9wdGlvbmFsUmlkVnN0cmluZwjTAAAAbAAAAG0AAABuAAAAbwAAAHAAAABxVG5hbWVU
    a2luZFhvcHRpb25hbFtkaXNwbGF5TmFtZVZzdHJpbmcI0wAAAHMAAAB0AAAAdQAAAHYAAAB3AAAAeFRuYW1lVGtpbmRYb3B0
    aW9uYWxWc3RhdHVzVnN0cmluZwjTAAAAegAAAHsAAAB8AAAAfQAAAH4AAAB/owAAAHIAAAB5AAAAgKDTAAAAaAAAAGkAAABq
    AAAAawAAAIEAAACCV2lkRmllbGRWZmllbGRzV2luZGV4ZXNSaWRUbmFtZVRraW5kWG9wdGlvbmFsUmlkU2ludAjTAAAAiAAA
    AIkAAACKAAAAiwAAAIwAAACNVG5hbWVUa2luZFhvcHRpb25hbFRuYW1lVnN0cmluZwjTAAAAjwAAAJAAAACRAAAAkgAAAJMA
    AACUVG5hbWVUa2luZFhvcHRpb25hbFVzY29yZVZkb3VibGUJ0wAAAJYAAACXAAAAmAAAAJkAAACaAAAAm1RuYW1lVGtpbmRY
    b3B0aW9uYWxXZGVmYXVsdFRkb25lVGJvb2wICNQAAACdAAAAngAAAJ8AAACgAAAAoQAAAKIAAACjAAAApFRuYW1lVGtpbmRY
    b3B0aW9uYWxVY291bnRTaW50CdMAAACmAAAApwAAAKgAAACpAAAAqgAAAKtUbmFtZVRraW5kWG9wdGlvbmFsVGJsb2JVYnl0
    ZXMJ0wAAAK0AAACuAAAArwAAALAAAACxAAAAslRuYW1lVGtpbmRYb3B0aW9uYWxXZGVmYXVsdFR3aGVuVGRhdGUIEADUAAAA
    tAAAALUAAAC2AAAAtwAAALgAAAC5AAAAugAAALtUbmFtZVRraW5kWG9wdGlvbmFsU3JlZlR1dWlkCdMAAAC9AAAAvgAAAL8A
    AADAAAAAwQAAAMJUbmFtZVRraW5kWG9wdGlvbmFsVGluZm9YZG9jdW1lbnQJ0wAAAMQAAADFAAAAxgAAAMcAAADIAAAAyVRu
    YW1lVGtpbmRYb3B0aW9uYWxUbm90ZVZzdHJpbmcJ0wAAAMsAAADMAAAAzQAAAM4AAADPAAAA0KoAAACOAAAAlQAAAJwAAACl
    AAAArAAAALMAAAC8AAAAwwAAAMoAAADRVmZpZWxkc1Z1bmlxdWVUbmFtZaEAAADVCdIAAADTAAAA1AAAANYAAADXVmZpZWxk
    c1Z1bmlxdWVUd2hlblVzY29yZaIAAADbAAAA3AjSAAAA2QAAANoAAADdAAAA3qIAAADYAAAA39MAAACEAAAAhQAAAIYAAAB6
    AAAA0gAAAODUAAAAEAAAABEAAAASAAAAEwAAAEsAAABnAAAAgwAAAOFbQ2hhdE1lc3NhZ2VSaWRYdGhyZWFkSURWc2VuZGVy
    VHRleHRUZGF0ZVZpc1JlYWTWAAAA5AAAAOUAAADmAAAA5wAAAOgAAADpAAAA6wAAAOwAAADtAAAA7gAAAO8AAADwXxAkQzBG
    RkU0MDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMDEyXxAkQzBGRkU0MDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMDAx
    U2Jlbl8QGzggd29ya3MuIEknbLogJnJpbmcgY29mZmVlLhMABjeEcYTAAAnWAAAA5AAAAOUAAADmAAAA5wAAAOgAAADpAAAA
    8gAAAPMAAAD0AAAA9QAAAPYAAAD3XxAkQzBGRkU0MDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMDE0XxAkQzBGRkU0MDAt
    MDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMDAxU2NuYV8QAAAAAAAAAAAgdGhlIG5vcnRoIGNhciBwYXJrLhMABjeEeKvOAAnW
    AAAA5AAAAOUAAADmAAAA5wAAAOgAAADpAAAA+QAAAPoAAAD7AAAA/AAAAP0AAAD+XxAkQzBGRkU0MDAtMDAwMC00MDAwLTgw
    MDAtMDAwMDAwMDAwMDE2XxAkQzBGRkU0MDAtMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMDAxU2Nob1xDb3VudCBtZSZpbiET
    AAY3hH/S3AAJ1gAAAOQAAADlAAAA5gAAAOcAAADoAAAA6QAAAQAAAAEBAAABAgAAAQMAAAEEAAABBV8QJEMwRkZFNDAwLTAw
    MDAtNDAwMC04MDAwLTAwMDAwMDAwMDAxMF8QJEMwRkZFNDAwLTAwMDAtNDAwMC04MDAwLTAwMDAwMDAwMDAwMVNhbmFfECVT
    YXR1cmRheSBhdCA4PyBUaGUgdHJhaWwgb3BlbnMgZWFybHkuEwAGN4RqVbIACaQAAADqAAAA8QAAAPgAAAD/WkNoYXRUaHJl
    YWRSaWRVdGl0bGVZY3JlYXRlZEF00wAAAQgAAAEJAAABCgAAAQwAAAENAAABDl8QJEM2RkZFNDAwLTAwMDAtNDAwMC04MDAw
    LTAwMDAwMDAwMDAwMVxXZWVrZW5kIGhpa2UTAAY3hGM2pAChAAABC1tEZW1vUHJvZmlsZVJpZFtkaXNwbGF5TmFtZVZzdGF0
    dXPTAAABEQAAARIAAAETAAABFQAAARYAAAEXU2FuYVNBbmFXb2ZmbGluZaEAAAEUVlNhbXBsZVJpZFRuYW1lVXNjb3JlVGRv
    bmVVY291bnRUYmz/91R3aGVuU3JlZlRpbmZvVG5vdGzZAAABGgAAARsAAAEcAAABHQAAAR4AAAEfAAABIAAAASIAAAEjAAAB
    JQAAASYAAAEnAAABKAAAASkAAAEqAAABKwAAASwAAAEtE3//////////UCOAAAAAAAAAAAgTgAAAAAAAAABAEwAGN52gXUJA
    UltdWiJxdW90ZWQiCgnaAAABGgAAARsAAAEcAAABHQAAAR4AAAEfAAABIAAAASEAAAEiAAABIwAAAS8AAAEwAAABMQAAATIA
    AAEzAAABNAAAATUAAAE2AAABNwAAATgQAVVmaXJzdCNABAAAAAAAAAkT//////////lDAAH/EwAGN52gXUJAXxAkMDEwMjAz
    MDQtMDUwNi0wNzA4LTA5MEEtMEIwQzBEMEUwRjEwW3siYSI6WzEsMl19bABuAGEA7wJ2AGUAIAADAAAAAAAAACAmFdQAAAEa
    AAABGwAAAR0AAAEgAAABOgAAATsAAAE8AAABPRP////9547mAFdzZWL4b25kCDP///////C9wKMAAAEkAAABLgAAATnUAAAA
    4wAAAQcAAAEQAAABGQAAAQYAAAEPAAABGAAAAT5bQ29mZmVyU3RvcmVXc2NoZW1hc1hlbnRpdGllc9MAAAFAAAABQQAAAUIA
    AAAPAAAA4gAAAT8AAAAIAAAADwAAABcAAAAiAAAALwAAADIAAAA2AAAAPwAAAEkAAABVAAAAWwAAAF0AAABmAAAAaAAAAIkA
    AACOAAAApwAAALMAAAC+AAAAygAAANEAAADZAAAA4AAAAOgAAADrAAAA8AAAAPUAAAD+AAABAQAAAQYAAAEHAAABIAAAASUA
    AAEqAAABMwAAATwAAAFBAAABQgAAAVsAAAFgAAABZQAAAW4AAAF1AAABfAAAAX0AAAGWAAABmwAAAaAAAAGpAAABrgAAAbUA
    AAG2AAABzwAAAdQAAAHZAAAB4gAAAecAAAHsAAAB7QAAAgYAAAILAAACEAAAAhkAAAIgAAACJQAAAiYAAAI/AAACWAAAAl8A
    AAJmAAACbwAAAnQAAAJ9AAACfgAAAo8AAAKUAAACrQAAArUAAAK8AAACxAAAAscAAALMAAAC0QAAAtoAAALdAAAC4gAAAuMA
    AAL8AAADAQAAAwYAAAMPAAADFQAAAxwAAAMdAAADNgAAAzsAAANAAAADSQAAA1MAAANYAAADWQAAA3IAAAN/AAADgAAAA5kA
    AAOhAAADqAAAA7AAAAOzAAADuAAAA70AAAPGAAADyQAAA9AAAAPRAAAD6gAAA+8AAAP0AAAD/QAABAkAAAQQAAAEEQAABCoA
    AAQvAAAENAAABD0AAAREAAAESwAABEwAAARlAAAEcgAABHMAAASMAAAElAAABJsBAASjAAAEpgAABKsAAASwAAAEuQAABLwA
    AATAAAAEwQAABNoAAATfAAAE5AAABO0AAATyAAAE+QAABPoAAAUTAAAFGAAABR0AAAUmAAAFLAAABTMAAAU0AAAFTQAABVIA
    AAVXAAAFYAAABWgAAAVtAAAFcgAABXMAAAV0AAAFlQAABZoAAAWfAAAFqAAABa4AAAWyAAAFswAABcwAAAXRAAAF1gAABd8A
    AAXkAAAF6gAABesAAAYEAAAGCQAABg4AAAYXAAAGHwAABiQAAAYpAAAGKgAABiwAAAZNAAAGUgAABlcAAAZgAAAGZAAABmkA
    AAZqAAAGgwAABogAAAaNAAAGlgAABpsAAAakAAAGpQAABr4AAAbDAAAGyAAABtEAAAbWAAAG3QAABt4AAAb3AAAHIAAABycA
    AAcuAAAHMwAABzgAAAc5AAAHSgAAB1EAAAdYAAAHXQAAB2MAAAdsAAAHbQAAB34AAAeHAAAHoAAAB8EAAAfNAAAH0AAAB9kA
    AAfgAAAH5QAAB+oAAAfxAAAIIgAACEkAAAhwAAAIdAAACJIAAAibAAAInAAACM0AAAj0AAAJGwAACR8AAAk9AAAJRgAACUcA
    AAl4AAAJnwAACcYAAAnKAAAJ1wAACeAAAAnhAAAKEgAACjkAAApgAAAKZAAACowAAAqVAAAKlgAACqcAAAqyAAAKtQAACrsA
    AArFAAAK3gAACwUAAAsSAAALGwAACyAAAAssAAALLwAACzsAAAtCAAALWwAAC18AAAtjAAALawAAC3AAAAt3AAALegAAC38A
    AAuFAAALigAAC5AAAAuVAAALmgAAC54AAAujAAALqAAAC/EAAAv6AAAL+wAADAQAAAwFAAAMDgAADA8AAAwYAAAMGwAADCYA
    AAx3AAAMeQAADH8AAAyIAAAMiQAADJIAAAyWAAAMnwAADMYAAAzSAAAM6wAADQwAAA0VAAANHQAADR4AAA0nAAANNAAADVUA
    AA1hAAANaQAADXIAAAAAAAAEBAAAAAAAAAFEAAAAAAAAAUMAAAAAAAANiw==
    """

  @Test func aDateThatIsNaNIsRefused() throws {
    let bytes = try #require(Data(base64Encoded: Self.dateThatIsNaN, options: .ignoreUnknownCharacters))
    let error = #expect(throws: CofferError.self) { try PlistFuzzing.decodeBinary(Array(bytes)) }
    #expect(error?.code == .corruptStore, "\(String(describing: error))")
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
