internal import Glibc

/// Decoding text in a declared charset to a Swift `String` (UTF-8), through glibc's iconv.
///
/// Labels are matched the way browsers match them (the WHATWG Encoding Standard's label table),
/// because senders check their mail in browsers and webmail: `latin1`, `iso-8859-1` and `us-ascii`
/// text with bytes 0x80–0x9F means Windows-1252 (curly quotes, €), `shift_jis` means Windows-31J,
/// `gb2312` means GB18030, `ks_c_5601-1987` means Windows-949. Anything else glibc knows is used as
/// is. Decoding never fails: invalid sequences become U+FFFD, an unknown charset is read as UTF-8.
///
/// Fast paths: UTF-8 and all-ASCII text in an ASCII-compatible charset are validated and turned into
/// a `String` directly, never copied through iconv.
package enum Charset {
    /// The outcome of decoding some bytes.
    package struct Decoded: Sendable {
        /// The decoded text.
        package var text: String
        /// The charset actually used, as iconv names it (`UTF-8`, `WINDOWS-1252`).
        package var charset: String
        /// The declared charset is not known (to us or iconv): the bytes were read as UTF-8.
        package var unknownCharset = false
        /// US-ASCII was declared (or no charset, RFC 2045 §5.2) but 8-bit bytes were present: they
        /// were read as UTF-8 when they form valid UTF-8, otherwise as Windows-1252.
        package var undeclared8Bit = false
        /// Some bytes were invalid in the charset and became U+FFFD.
        package var replacedInvalidBytes = false
    }

    /// How a label resolves.
    enum Resolved: Equatable {
        case utf8
        case ascii
        case iconv(String)
        case unknown
    }

    /// Decodes `bytes` declared as `label` (nil: no charset given, which means US-ASCII).
    package static func decode(_ bytes: ArraySlice<UInt8>, charset label: String?) -> Decoded {
        // No label is US-ASCII without resolving one: every parameter value of every MIME header comes here so, and
        // resolving "us-ascii" each time was a twentieth of the prefilter's time in perf.
        switch label.map(resolve) ?? .ascii {
        case .utf8:
            return decodeUTF8(bytes)
        case .ascii:
            if isASCII(bytes) { return Decoded(text: String(decoding: bytes, as: UTF8.self), charset: "US-ASCII") }
            // 8-bit bytes under a US-ASCII label: modern senders mean UTF-8 and forget to say so;
            // older ones mean their platform's Latin charset, which Windows-1252 covers.
            if let text = String(validating: bytes, as: UTF8.self) {
                return Decoded(text: text, charset: "UTF-8", undeclared8Bit: true)
            }
            var decoded = convert(bytes, from: "WINDOWS-1252") ?? decodeUTF8(bytes)
            decoded.undeclared8Bit = true
            return decoded
        case .iconv(let name):
            if isASCIICompatible(name) && isASCII(bytes) {
                return Decoded(text: String(decoding: bytes, as: UTF8.self), charset: name)
            }
            if let decoded = convert(bytes, from: name) { return decoded }
            var decoded = decodeUTF8(bytes)
            decoded.unknownCharset = true
            return decoded
        case .unknown:
            var decoded = decodeUTF8(bytes)
            decoded.unknownCharset = true
            return decoded
        }
    }

    /// True when `label` names a charset that can be decoded (a known alias, or a name iconv accepts).
    package static func isKnown(_ label: String) -> Bool {
        switch resolve(label) {
        case .utf8, .ascii: return true
        case .unknown: return false
        case .iconv(let name):
            guard let descriptor = open(name) else { return false }
            iconv_close(descriptor)
            return true
        }
    }

    // MARK: - Labels

    /// Maps a charset label to what decodes it. Labels are case-insensitive, may be quoted and may
    /// carry an RFC 2231 §5 language suffix (`utf-8*en`).
    static func resolve(_ label: String) -> Resolved {
        var name = Substring(label)
        while let first = name.first, first == " " || first == "\t" || first == "\"" || first == "'" {
            name = name.dropFirst()
        }
        while let last = name.last, last == " " || last == "\t" || last == "\"" || last == "'" {
            name = name.dropLast()
        }
        if let star = name.firstIndex(of: "*") { name = name[..<star] }
        // Only the characters charset names use (RFC 2978 §2.3 mime-charset-chars), so nothing that
        // iconv would read as a path or a `//TRANSLIT` suffix reaches it.
        guard !name.isEmpty, name.utf8.count <= 40,
            name.utf8.allSatisfy({ byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
                    UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "+"), UInt8(ascii: "("), UInt8(ascii: ")"):
                    return true
                default: return false
                }
            })
        else { return .unknown }
        let lowered = String(name).fastLowercased
        if let alias = aliases[lowered] { return alias }
        // windows-1250...1258 as cp1250, x-cp1250, win-1250.
        for prefix in ["cp", "x-cp", "win-", "cp-", "windows-"] where lowered.hasPrefix(prefix) {
            let digits = lowered.dropFirst(prefix.count)
            if digits.count == 4, digits.hasPrefix("125"), digits.allSatisfy(\.isNumber) {
                return .iconv("WINDOWS-\(digits)")
            }
        }
        // iso8859-2, iso_8859-2, iso-8859-2:1987, iso88592.
        for prefix in ["iso-8859-", "iso8859-", "iso_8859-", "iso8859_", "iso8859"] where lowered.hasPrefix(prefix) {
            var digits = lowered.dropFirst(prefix.count)
            if let colon = digits.firstIndex(of: ":") { digits = digits[..<colon] }
            if !digits.isEmpty, digits.count <= 2, digits.allSatisfy(\.isNumber) {
                let standard = "iso-8859-\(digits)"
                return aliases[standard] ?? .iconv("ISO-8859-\(digits)")
            }
        }
        return .iconv(lowered.uppercased())
    }

    /// The WHATWG Encoding Standard's label table, for the labels whose meaning differs from (or is
    /// unknown to) glibc, plus the UTF-8 and US-ASCII spellings that take the fast paths.
    private static let aliases: [String: Resolved] = {
        var table: [String: Resolved] = [:]
        func add(_ labels: [String], _ resolved: Resolved) { for label in labels { table[label] = resolved } }
        add(
            [
                "utf-8", "utf8", "unicode-1-1-utf-8", "unicode-2-0-utf-8", "unicode11utf8", "unicode20utf8",
                "x-unicode20utf8", "x-unicode-2-0-utf-8",
            ], .utf8)
        add(
            [
                "us-ascii", "ascii", "us", "ansi_x3.4-1968", "ansi_x3.4-1986", "iso646-us", "iso_646.irv:1991",
                "cp367", "ibm367", "csascii", "iso-ir-6", "646", "x-ascii", "7bit", "default",
            ], .ascii)
        add(
            [
                "iso-8859-1", "iso_8859-1:1987", "latin1", "l1", "cp819", "ibm819", "iso-ir-100", "csisolatin1",
                "windows-1252", "x-cp1252", "iso88591", "8859-1", "iso-latin-1", "x-user-defined",
            ], .iconv("WINDOWS-1252"))
        add(["iso-8859-9", "latin5", "l5", "iso-ir-148", "csisolatin5", "iso88599"], .iconv("WINDOWS-1254"))
        add(["iso-8859-11", "tis-620", "windows-874", "cp874", "dos-874", "iso885911"], .iconv("CP874"))
        add(["iso-8859-8-i", "iso-8859-8-e", "csiso88598i", "csiso88598e", "logical", "visual"], .iconv("ISO-8859-8"))
        add(["iso-8859-6-i", "iso-8859-6-e", "csiso88596i", "csiso88596e"], .iconv("ISO-8859-6"))
        add(
            [
                "gb2312", "gbk", "x-gbk", "cp936", "ms936", "windows-936", "chinese", "csgb2312", "euc-cn",
                "gb_2312", "gb_2312-80", "iso-ir-58", "csiso58gb231280", "gb18030",
            ], .iconv("GB18030"))
        add(["big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5", "x-big5"], .iconv("BIG5-HKSCS"))
        add(
            [
                "ks_c_5601-1987", "ks_c_5601-1989", "ks_c_5601", "ksc5601", "ksc_5601", "euc-kr", "cseuckr",
                "korean", "windows-949", "cp949", "iso-ir-149", "csksc56011987", "uhc",
            ], .iconv("CP949"))
        add(
            [
                "shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "csshiftjis", "windows-31j", "cp932",
                "ms932", "x-ms-cp932",
            ], .iconv("CP932"))
        add(["koi8-ru", "koi8-u"], .iconv("KOI8-U"))
        add(["koi8-r", "koi8", "koi", "cskoi8r"], .iconv("KOI8-R"))
        add(["macintosh", "mac", "x-mac-roman", "csmacintosh"], .iconv("MACINTOSH"))
        return table
    }()

    /// Charsets whose bytes 0x00–0x7F are ASCII, so all-ASCII input decodes as itself. (Not UTF-7,
    /// UTF-16/32, the ISO-2022 family, HZ or EBCDIC: those go through iconv.)
    static func isASCIICompatible(_ name: String) -> Bool {
        for prefix in [
            "ISO-8859-", "WINDOWS-", "KOI8-", "CP9", "CP874", "CP125", "GB18030", "BIG5", "EUC-", "MACINTOSH",
        ]
        where name.hasPrefix(prefix) {
            return true
        }
        return false
    }

    // MARK: - Decoding

    /// UTF-8, validated; invalid sequences become U+FFFD (Unicode §3.9 maximal subparts). A byte-order
    /// mark at the start is dropped.
    static func decodeUTF8(_ input: ArraySlice<UInt8>) -> Decoded {
        var bytes = input
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        if let text = String(validating: bytes, as: UTF8.self) { return Decoded(text: text, charset: "UTF-8") }
        return Decoded(text: String(decoding: bytes, as: UTF8.self), charset: "UTF-8", replacedInvalidBytes: true)
    }

    /// True when every byte is below 0x80 (checked eight bytes at a time).
    static func isASCII(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            let count = raw.count
            while offset + 8 <= count {
                if raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
                    return false
                }
                offset += 8
            }
            while offset < count {
                if raw[offset] >= 0x80 { return false }
                offset += 1
            }
            return true
        }
    }

    static func open(_ name: String) -> iconv_t? {
        let descriptor = iconv_open("UTF-8", name)
        guard let descriptor, descriptor != iconv_t(bitPattern: -1) else { return nil }
        return descriptor
    }

    /// Converts through iconv to UTF-8. Invalid or truncated sequences become U+FFFD and decoding goes
    /// on with the next byte. Returns nil when iconv does not know `name`.
    static func convert(_ input: ArraySlice<UInt8>, from name: String) -> Decoded? {
        guard let descriptor = open(name) else { return nil }
        defer { iconv_close(descriptor) }
        let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]
        var replaced = false
        var output = [UInt8]()
        output.reserveCapacity(input.count + input.count / 2 + 16)
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        input.withUnsafeBufferPointer { input in
            chunk.withUnsafeMutableBufferPointer { chunk in
                guard let chunkBase = chunk.baseAddress else { return }
                let chunkStart = UnsafeMutableRawPointer(chunkBase).assumingMemoryBound(to: CChar.self)
                var inPointer: UnsafeMutablePointer<CChar>? = input.baseAddress.map {
                    UnsafeMutableRawPointer(mutating: $0).assumingMemoryBound(to: CChar.self)
                }
                var inLeft = input.count
                // Each round either consumes input, produces output, or skips a byte, so this ends.
                while true {
                    var outPointer: UnsafeMutablePointer<CChar>? = chunkStart
                    var outLeft = chunk.count
                    let result: Int
                    if inLeft > 0 {
                        result = iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                    } else {
                        result = iconv(descriptor, nil, nil, &outPointer, &outLeft)  // flush shift state
                    }
                    let failure = result == -1 ? errno : 0
                    output.append(contentsOf: UnsafeBufferPointer(start: chunkBase, count: chunk.count - outLeft))
                    if result != -1 {
                        if inLeft == 0 { break }
                        continue
                    }
                    switch failure {
                    case E2BIG where outLeft < chunk.count:
                        continue  // the chunk is full: go round again with an empty one
                    case EINVAL:  // an incomplete sequence at the end
                        output.append(contentsOf: replacement)
                        replaced = true
                        inLeft = 0
                    default:  // EILSEQ: an invalid sequence; skip one byte
                        output.append(contentsOf: replacement)
                        replaced = true
                        if inLeft == 0 { return }
                        inPointer = inPointer.map { $0 + 1 }
                        inLeft -= 1
                    }
                }
            }
        }
        var decoded = Decoded(text: String(decoding: output, as: UTF8.self), charset: name)
        decoded.replacedInvalidBytes = replaced
        return decoded
    }
}
