import Testing

@testable import MailMessage

@Suite struct CharsetTests {
    /// No label decodes as US-ASCII does (without resolving the label): ASCII, 8-bit UTF-8, 8-bit Latin-1, nothing.
    @Test(arguments: [[], utf8("boundary=abc"), utf8("café €"), latin1("caf\u{E9} \u{80}"), [0xC3]])
    func noLabelIsUSASCII(bytes: [UInt8]) {
        let unlabelled = Charset.decode(bytes[...], charset: nil)
        let ascii = Charset.decode(bytes[...], charset: "us-ascii")
        #expect(unlabelled.text == ascii.text)
        #expect(unlabelled.charset == ascii.charset)
        #expect(unlabelled.undeclared8Bit == ascii.undeclared8Bit)
        #expect(unlabelled.replacedInvalidBytes == ascii.replacedInvalidBytes)
        #expect(!unlabelled.unknownCharset)
    }

    @Test(arguments: [
        ("utf-8", utf8("café €"), "café €"),
        ("UTF8", utf8("café"), "café"),
        ("unicode-1-1-utf-8", utf8("café"), "café"),
        ("\"utf-8\"", utf8("café"), "café"),
        ("iso-8859-1", latin1("caf\u{E9}"), "café"),
        ("latin1", latin1("caf\u{E9}"), "café"),
        ("ISO-8859-15", [0xA4], "€"),
        ("iso-8859-2", [0xB1, 0xE6], "ąć"),
        ("iso8859-7", [0xE1], "α"),
        ("windows-1252", latin1("\u{93}quoted\u{94} \u{80}5 caf\u{E9}"), "“quoted” €5 café"),
        ("cp1252", latin1("\u{80}"), "€"),
        ("x-cp1250", [0x9A], "š"),
        ("windows-1251", [0xCF, 0xF0, 0xE8], "При"),
        ("koi8-r", [0xF0, 0xD2, 0xC9], "При"),
        ("shift_jis", [0x82, 0xA0, 0x5C], "あ\\"),  // Windows-31J: 0x5C is a backslash
        ("iso-2022-jp", [0x1B, 0x24, 0x42, 0x24, 0x22, 0x1B, 0x28, 0x42], "あ"),
        ("gb2312", [0xC4, 0xE3, 0xBA, 0xC3], "你好"),
        ("ks_c_5601-1987", [0xC7, 0xD1], "한"),
        ("utf-8*en", utf8("é"), "é"),  // RFC 2231 language suffix
    ])
    func decodesDeclaredCharset(label: String, bytes: [UInt8], expected: String) {
        let decoded = Charset.decode(bytes[...], charset: label)
        #expect(decoded.text == expected)
        #expect(!decoded.unknownCharset)
        #expect(!decoded.replacedInvalidBytes)
    }

    @Test func latin1LabelMeansWindows1252AsBrowsersRead() {
        // WHATWG Encoding Standard: "iso-8859-1" is windows-1252, so 0x80 is €, not a C1 control.
        let decoded = Charset.decode(latin1("\u{80}")[...], charset: "ISO-8859-1")
        #expect(decoded.text == "€")
        #expect(decoded.charset == "WINDOWS-1252")
    }

    @Test func usASCIIWithUTF8BytesIsReadAsUTF8() {
        let decoded = Charset.decode(utf8("café")[...], charset: "us-ascii")
        #expect(decoded.text == "café")
        #expect(decoded.charset == "UTF-8")
        #expect(decoded.undeclared8Bit)
    }

    @Test func usASCIIWithLatinBytesIsReadAsWindows1252() {
        let decoded = Charset.decode(latin1("caf\u{E9} \u{80}")[...], charset: nil)
        #expect(decoded.text == "café €")
        #expect(decoded.charset == "WINDOWS-1252")
        #expect(decoded.undeclared8Bit)
    }

    @Test func pureASCIIUnderUSASCIIHasNoWarning() {
        let decoded = Charset.decode(utf8("plain")[...], charset: "us-ascii")
        #expect(decoded.text == "plain")
        #expect(!decoded.undeclared8Bit)
    }

    @Test(arguments: ["x-bogus-charset", "../../etc/passwd", "utf-8//TRANSLIT", "", String(repeating: "a", count: 200)])
    func unknownCharsetIsReadAsUTF8(label: String) {
        let decoded = Charset.decode(utf8("café")[...], charset: label)
        #expect(decoded.text == "café")
        #expect(decoded.unknownCharset)
    }

    @Test func invalidUTF8IsReplacedNotThrown() {
        let decoded = Charset.decode([0x61, 0xFF, 0x62, 0xE2, 0x82][...], charset: "utf-8")
        #expect(decoded.text == "a\u{FFFD}b\u{FFFD}")
        #expect(decoded.replacedInvalidBytes)
    }

    @Test func invalidBytesInIconvCharsetAreReplaced() {
        // 0x81 is undefined in Windows-1252; a truncated Shift_JIS lead byte ends the input.
        let windows = Charset.decode([0x61, 0x81, 0x62][...], charset: "windows-1252")
        #expect(windows.text == "a\u{FFFD}b")
        #expect(windows.replacedInvalidBytes)
        let sjis = Charset.decode([0x61, 0x82][...], charset: "shift_jis")
        #expect(sjis.text == "a\u{FFFD}")
        #expect(sjis.replacedInvalidBytes)
    }

    @Test func utf8ByteOrderMarkIsDropped() {
        #expect(Charset.decode([0xEF, 0xBB, 0xBF, 0x41][...], charset: "utf-8").text == "A")
    }

    @Test func largeInputCrossesIconvChunks() {
        let bytes = [UInt8](repeating: 0xE9, count: 100_000)  // é in Latin-1: two bytes in UTF-8
        let decoded = Charset.decode(bytes[...], charset: "iso-8859-1")
        #expect(decoded.text.utf8.count == 200_000)
        #expect(decoded.text.unicodeScalars.allSatisfy { $0 == "é" })
    }

    @Test func knownLabels() {
        #expect(Charset.isKnown("utf-8"))
        #expect(Charset.isKnown("windows-1258"))
        #expect(Charset.isKnown("EUC-JP"))
        #expect(!Charset.isKnown("x-no-such-charset"))
    }
}
