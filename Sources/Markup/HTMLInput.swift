internal import Glibc

/// Turns a document's bytes into valid UTF-8 with no NUL byte, the only form handed to libxml2.
///
/// libxml2 could detect and switch encodings itself (from a BOM, a `<meta charset>`, or half-way
/// through on an invalid byte), but then the bytes it parses would differ from the bytes the
/// `StartTagScanner` safety check has seen (UTF-7, UTF-16, ISO-2022-JP and EBCDIC all hide `<` and
/// `"` from a byte scanner). So the encoding is settled here, following the WHATWG Encoding
/// standard's order, and libxml2 is told to ignore `<meta charset>` (`HTML_PARSE_IGNORE_ENC`):
///
/// 1. a byte order mark (UTF-8, UTF-16LE, UTF-16BE) wins, as in HTML's "encoding sniffing algorithm";
/// 2. else the caller's declared encoding (a MIME or HTTP `charset`, the "transport layer" step);
/// 3. else a `<meta charset>` or `<meta http-equiv content="…; charset=…">` in the first 1024 bytes
///    (HTML's "prescan a byte stream to determine its encoding", simplified); UTF-16 named there
///    means UTF-8, as that algorithm says;
/// 4. else UTF-8 when the bytes are valid UTF-8, windows-1252 otherwise (what libxml2 does too).
///
/// Labels are resolved as the Encoding standard does for the common ones (`latin1`, `us-ascii` and
/// `iso-8859-1` mean windows-1252; `gb2312` means GB18030; `shift_jis` means windows-31j), any
/// other label is passed to iconv, except those HTML forbids ("user agents must not support the
/// CESU-8, UTF-7, BOCU-1, SCSU, EBCDIC, and UTF-32 encodings"): UTF-7 in particular writes `<` as
/// `+ADw-`. Bytes invalid in the encoding, and NUL bytes (which stop libxml2 2.9's loops), become U+FFFD.
enum HTMLInput {
    /// How bytes are turned into UTF-8.
    private enum Decoding: Equatable {
        case utf8
        case iconv(String)

        /// Bytes per code unit, so that an invalid unit is skipped whole.
        var unitSize: Int {
            guard case .iconv(let name) = self else { return 1 }
            return name.hasPrefix("UTF-16") ? 2 : 1
        }
    }

    /// The document as UTF-8, without BOM and NUL; reports replaced bytes and unknown encodings.
    ///
    /// `knownValidUTF8`: the bytes are a Swift `String`'s (an email part the MIME reader decoded), so when they are
    /// read as UTF-8 only a NUL can need replacing, and a search for one stands in for the validation.
    static func utf8(
        _ bytes: [UInt8], declaredEncoding: String?, knownValidUTF8: Bool = false, state: inout ExtractionState
    ) -> ArraySlice<UInt8> {
        var body = bytes[...]
        var decoding: Decoding?
        var declared = false
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            body = bytes[3...]
            decoding = .utf8
        } else if bytes.starts(with: [0xFE, 0xFF]) {
            body = bytes[2...]
            decoding = .iconv("UTF-16BE")
        } else if bytes.starts(with: [0xFF, 0xFE]) {
            body = bytes[2...]
            decoding = .iconv("UTF-16LE")
        } else if let label = declaredEncoding {
            declared = true
            decoding = resolve(label)
            if decoding == nil {
                state.warning(
                    .encodingUnsupported, path: "",
                    "the declared encoding '\(label.prefix(40))' is not supported; read as UTF-8 or windows-1252"
                )
            }
        } else if let label = metaCharset(bytes) {
            decoding = resolve(label)
            // A <meta> that could be read as ASCII cannot truthfully declare UTF-16.
            if case .iconv(let name) = decoding, name.hasPrefix("UTF-16") { decoding = .utf8 }
            if decoding == nil {
                state.warning(
                    .encodingUnsupported, path: "",
                    "the document's <meta> charset '\(label.prefix(40))' is not supported; read as UTF-8 or windows-1252"
                )
            }
        }
        switch decoding {
        case .iconv(let name):
            let (utf8, replaced) = transcode(body, from: name, unitSize: decoding?.unitSize ?? 1)
            if replaced > 0 {
                state.warning(
                    .encodingInvalid, path: "",
                    "\(replaced) byte sequences invalid in \(name) (or NUL) were replaced by U+FFFD"
                )
            }
            return utf8[...]
        case .utf8:
            if knownValidUTF8 && !containsNUL(body) { return body }
            let (utf8, replaced) = validUTF8(body)
            if replaced > 0 {
                state.warning(
                    .encodingInvalid, path: "", "\(replaced) bytes invalid in UTF-8 (or NUL) were replaced by U+FFFD")
            }
            return utf8
        case nil:
            let scan = body.withUnsafeBufferPointer { UTF8Check.scan($0) }
            if scan.firstInvalid == nil {
                guard scan.firstNUL != nil else { return body }
                let (utf8, replaced) = validUTF8(body)
                state.warning(.encodingInvalid, path: "", "\(replaced) NUL bytes were replaced by U+FFFD")
                return utf8
            }
            // Not UTF-8 and not declared: windows-1252, as browsers and libxml2 guess.
            let (utf8, replaced) = transcode(body, from: "WINDOWS-1252", unitSize: 1)
            if replaced > 0 && declared {
                state.warning(.encodingInvalid, path: "", "\(replaced) bytes could not be read and became U+FFFD")
            }
            return utf8[...]
        }
    }

    // MARK: Labels

    private static let labels: [String: Decoding] = {
        var table: [String: Decoding] = [:]
        func add(_ names: [String], _ decoding: Decoding) { for name in names { table[name] = decoding } }
        add(["utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8"], .utf8)
        add(
            [
                "ansi_x3.4-1968", "ascii", "cp1252", "cp819", "csisolatin1", "ibm819", "iso-8859-1", "iso-ir-100",
                "iso8859-1", "iso88591", "iso_8859-1", "iso_8859-1:1987", "l1", "latin1", "us-ascii",
                "windows-1252", "x-cp1252",
            ], .iconv("WINDOWS-1252"))
        add(
            ["iso-8859-9", "iso8859-9", "iso88599", "iso_8859-9", "l5", "latin5", "windows-1254"],
            .iconv("WINDOWS-1254"))
        add(["tis-620", "iso-8859-11", "iso8859-11", "windows-874", "dos-874"], .iconv("CP874"))
        add(["gb2312", "gbk", "gb18030", "chinese", "csgb2312", "x-gbk", "cp936"], .iconv("GB18030"))
        add(
            ["shift_jis", "shift-jis", "sjis", "ms_kanji", "ms932", "windows-31j", "x-sjis", "csshiftjis"],
            .iconv("CP932"))
        add(["euc-kr", "ks_c_5601-1987", "ksc5601", "ks_c_5601-1989", "windows-949", "cp949"], .iconv("CP949"))
        add(["big5", "big5-hkscs", "cn-big5", "x-x-big5", "csbig5"], .iconv("BIG5-HKSCS"))
        add(
            ["utf-16", "utf-16le", "unicode", "ucs-2", "csunicode", "iso-10646-ucs-2", "unicodefeff"],
            .iconv("UTF-16LE"))
        add(["utf-16be", "unicodefffe"], .iconv("UTF-16BE"))
        return table
    }()

    /// Encodings HTML forbids, by label fragment (EBCDIC also as `ibm037`, `cp037`, … below).
    private static let forbidden = [
        "utf-7", "utf7", "utf-32", "utf32", "ucs-4", "ucs4", "cesu", "bocu", "scsu", "ebcdic", "ibm500", "cp500",
        "ibm1047", "cp1047", "ibm1026", "ibm273", "ibm277", "ibm278", "ibm280", "ibm284", "ibm285", "ibm297", "ibm871",
    ]

    /// The decoding for an encoding label, or nil when neither the table nor iconv knows it.
    private static func resolve(_ label: String) -> Decoding? {
        let name = String(
            label.lowercased().unicodeScalars.filter { !" \t\r\n\u{0C}\"'".unicodeScalars.contains($0) })
        if let known = labels[name] { return known }
        guard !forbidden.contains(where: { name.contains($0) }), !name.hasPrefix("ibm0"), !name.hasPrefix("cp0") else {
            return nil
        }
        guard !name.isEmpty, name.count <= 40,
            name.unicodeScalars.allSatisfy({
                $0.isASCII && ($0.properties.isAlphabetic || "0123456789-_.:".unicodeScalars.contains($0))
            })
        else { return nil }
        let upper = name.uppercased()
        let descriptor = iconv_open("UTF-8", upper)
        guard descriptor != iconv_t(bitPattern: -1) else { return nil }
        iconv_close(descriptor)
        return .iconv(upper)
    }

    /// The charset named by the first `<meta>` in the first 1024 bytes that names one.
    static func metaCharset(_ bytes: [UInt8]) -> String? {
        let window = bytes.prefix(1024)
        var index = window.startIndex
        while let open = window[index...].firstIndex(of: UInt8(ascii: "<")) {
            index = open + 1
            guard matches(window, at: index, "meta"), index + 4 < window.endIndex,
                [0x20, 0x09, 0x0A, 0x0D, 0x0C, UInt8(ascii: "/")].contains(window[index + 4])
            else { continue }
            let tagEnd = window[index...].firstIndex(of: UInt8(ascii: ">")) ?? window.endIndex
            var cursor = index + 4
            while cursor + 7 <= tagEnd {
                guard matches(window, at: cursor, "charset") else {
                    cursor += 1
                    continue
                }
                cursor += 7
                while cursor < tagEnd, window[cursor].isASCIIWhitespace { cursor += 1 }
                guard cursor < tagEnd, window[cursor] == UInt8(ascii: "=") else { continue }
                cursor += 1
                while cursor < tagEnd,
                    window[cursor].isASCIIWhitespace || window[cursor] == 0x22 || window[cursor] == 0x27
                {
                    cursor += 1
                }
                let start = cursor
                while cursor < tagEnd, isLabelByte(window[cursor]) { cursor += 1 }
                if cursor > start { return String(decoding: window[start..<cursor], as: UTF8.self) }
            }
            index = tagEnd
        }
        return nil
    }

    private static func matches(_ bytes: ArraySlice<UInt8>, at index: Int, _ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.endIndex - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] | 0x20 != word.utf8Start[offset] { return false }
        return true
    }

    private static func isLabelByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
            UInt8(ascii: ":"):
            return true
        default:
            return false
        }
    }

    // MARK: Conversion

    /// Whether `bytes` hold a NUL byte.
    private static func containsNUL(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            return memchr(base, 0, buffer.count) != nil
        }
    }

    /// `bytes` when they are valid UTF-8 without NUL; else a copy with each bad byte (or NUL) as U+FFFD.
    private static func validUTF8(_ bytes: ArraySlice<UInt8>) -> (bytes: ArraySlice<UInt8>, replaced: Int) {
        let scan = bytes.withUnsafeBufferPointer { UTF8Check.scan($0) }
        guard scan.firstInvalid != nil || scan.firstNUL != nil else { return (bytes, 0) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 64)
        var replaced = 0
        bytes.withUnsafeBufferPointer { input in
            var index = 0
            while index < input.count {
                let length = UTF8Check.sequenceLength(input, at: index)
                if length == 0 || input[index] == 0 {
                    output.append(contentsOf: [0xEF, 0xBF, 0xBD])
                    replaced += 1
                    index += 1
                } else {
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: input[index..<index + length]))
                    index += length
                }
            }
        }
        return (output[...], replaced)
    }

    /// Converts with iconv; invalid or incomplete units and NUL become U+FFFD (counted in `replaced`).
    private static func transcode(_ bytes: ArraySlice<UInt8>, from name: String, unitSize: Int) -> (
        [UInt8], replaced: Int
    ) {
        let descriptor = iconv_open("UTF-8", name)
        guard descriptor != iconv_t(bitPattern: -1) else { return (Array(validUTF8(bytes).bytes), 0) }
        defer { iconv_close(descriptor) }
        var output = [UInt8](repeating: 0, count: bytes.count * 2 + 64)
        var written = 0
        var replaced = 0
        bytes.withUnsafeBufferPointer { input in
            guard let base = input.baseAddress, !input.isEmpty else { return }
            var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(mutating: base)
                .assumingMemoryBound(to: CChar.self)
            var inLeft = input.count
            while true {
                if output.count - written < 16 { output += [UInt8](repeating: 0, count: output.count) }
                let (result, error, newlyWritten) = output.withUnsafeMutableBufferPointer { buffer in
                    var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(
                        buffer.baseAddress! + written
                    )
                    .assumingMemoryBound(to: CChar.self)
                    var outLeft = buffer.count - written
                    let before = outLeft
                    let result = iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                    return (result, errno, before - outLeft)
                }
                written += newlyWritten
                if result != -1 {
                    // Done; or, should iconv ever stop early without an error, stop rather than spin.
                    if inLeft == 0 || newlyWritten == 0 { return }
                    continue
                }
                switch error {
                case E2BIG:
                    output += [UInt8](repeating: 0, count: output.count)
                case EILSEQ, EINVAL:
                    // An invalid unit (EILSEQ) or one cut off at the end (EINVAL): replace it and go on.
                    if output.count - written < 3 { output += [UInt8](repeating: 0, count: 64) }
                    output[written] = 0xEF
                    output[written + 1] = 0xBF
                    output[written + 2] = 0xBD
                    written += 3
                    replaced += 1
                    let skip = min(unitSize, inLeft)
                    inPointer = inPointer.map { $0 + skip }
                    inLeft -= skip
                    if inLeft == 0 { return }
                default:
                    return
                }
            }
        }
        output.removeSubrange(written...)
        guard output.contains(0) else { return (output, replaced) }
        let cleaned = validUTF8(output[...])
        return (Array(cleaned.bytes), replaced + cleaned.replaced)
    }
}
