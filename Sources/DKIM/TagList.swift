/// A DKIM tag=value list (RFC 6376 §3.2), as used by the DKIM-Signature field and key records.
///
/// Values keep their inner whitespace (folding included) with leading and trailing whitespace
/// removed; `valueRanges` point into the parsed bytes so the signature's own `b=` value can be
/// blanked byte-exactly (RFC 6376 §3.7).
struct TagList: Sendable {
    struct Tag: Sendable {
        var name: String
        var value: String
        /// From just after `=` to just before the `;` that ends the tag-spec (or the end of input).
        var rawValueRange: Range<Int>
    }

    private(set) var tags: [Tag] = []

    subscript(name: String) -> String? { tags.first { $0.name == name }?.value }

    func tag(_ name: String) -> Tag? { tags.first { $0.name == name } }

    /// Parses a tag-list.
    /// - Throws: `.duplicateTag` when a tag name appears twice; `.signatureMalformed` for anything the
    ///   grammar does not allow (a missing `=`, a bad tag name, a character outside VALCHAR).
    init<Bytes: RandomAccessCollection>(parsing bytes: Bytes, what: String) throws(DKIMError)
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var seen = Set<String>()
        var index = bytes.startIndex
        let end = bytes.endIndex

        func isFWS(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        func skipFWS() { while index < end && isFWS(bytes[index]) { index += 1 } }

        while index < end {
            skipFWS()
            if index == end { break }  // trailing ";" followed by whitespace
            // tag-name = ALPHA *ALNUMPUNC
            let nameStart = index
            guard bytes[index].isASCIILetter else {
                throw DKIMError(code: .signatureMalformed, reason: "\(what): a tag must start with a letter at offset \(index - bytes.startIndex); write tags as name=value separated by ';'")
            }
            while index < end && (bytes[index].isASCIILetter || bytes[index].isASCIIDigit || bytes[index] == UInt8(ascii: "_")) {
                index += 1
            }
            let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
            skipFWS()
            guard index < end, bytes[index] == UInt8(ascii: "=") else {
                throw DKIMError(code: .signatureMalformed, reason: "\(what): tag '\(name)' has no '='; write it as \(name)=value")
            }
            index += 1
            let rawStart = index
            // The value runs to the next ';'. VALCHAR is %x21-3A / %x3C-7E, with WSP/FWS between runs.
            while index < end && bytes[index] != UInt8(ascii: ";") {
                let byte = bytes[index]
                guard isFWS(byte) || (byte >= 0x21 && byte <= 0x7E) else {
                    throw DKIMError(code: .signatureMalformed, reason: "\(what): tag '\(name)' holds a byte 0x\(String(byte, radix: 16)) that is not allowed in a tag value")
                }
                index += 1
            }
            let rawEnd = index
            var valueStart = rawStart
            var valueEnd = rawEnd
            while valueStart < valueEnd && isFWS(bytes[valueStart]) { valueStart += 1 }
            while valueEnd > valueStart && isFWS(bytes[valueEnd - 1]) { valueEnd -= 1 }
            guard seen.insert(name).inserted else {
                throw DKIMError(code: .duplicateTag, reason: "\(what): tag '\(name)' appears twice; each tag may appear once (RFC 6376 §3.2)")
            }
            tags.append(Tag(name: name, value: String(decoding: bytes[valueStart..<valueEnd], as: UTF8.self), rawValueRange: rawStart..<rawEnd))
            if index < end { index += 1 }  // the ';'
        }
    }
}

extension UInt8 {
    var isASCIILetter: Bool { (self >= 0x41 && self <= 0x5A) || (self >= 0x61 && self <= 0x7A) }
    var isASCIIDigit: Bool { self >= 0x30 && self <= 0x39 }
}

extension StringProtocol {
    /// The string with every space, tab, CR and LF removed: how DKIM reads base64 values
    /// folded over several lines (RFC 6376 §3.5 `b=`, `bh=`; §3.6.1 `p=`).
    ///
    /// Works on the UTF-8 bytes: the four characters are single ASCII bytes, which never occur inside
    /// a multi-byte sequence, so removing the bytes removes exactly those scalars.
    var removingFoldingWhitespace: String {
        func isFoldingWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        guard utf8.contains(where: isFoldingWhitespace) else { return String(self) }
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count)
        for byte in utf8 where !isFoldingWhitespace(byte) { bytes.append(byte) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
