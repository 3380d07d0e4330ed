/// UTF-8 well-formedness (Unicode §3.9, Table 3-7) over raw bytes, with an eight-bytes-at-a-time
/// path for ASCII, which most HTML is.
enum UTF8Check {
    /// Where the first invalid sequence and the first NUL byte are, if any.
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> (firstInvalid: Int?, firstNUL: Int?) {
        guard let base = bytes.baseAddress else { return (nil, nil) }
        let raw = UnsafeRawPointer(base)
        let count = bytes.count
        var firstNUL: Int?
        var index = 0
        while index < count {
            if index + 8 <= count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let highBits = word & 0x8080_8080_8080_8080
                let zeroBytes = (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
                if highBits == 0 && (zeroBytes == 0 || firstNUL != nil) {
                    index += 8
                    continue
                }
            }
            let byte = bytes[index]
            if byte < 0x80 {
                if byte == 0, firstNUL == nil { firstNUL = index }
                index += 1
                continue
            }
            let length = sequenceLength(bytes, at: index)
            if length == 0 { return (index, firstNUL) }
            index += length
        }
        return (nil, firstNUL)
    }

    /// The length of the well-formed sequence starting at `index`, or 0 when it is not well-formed.
    static func sequenceLength(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
        let lead = bytes[index]
        if lead < 0x80 { return 1 }
        let remaining = bytes.count - index
        func continuation(_ offset: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> Bool {
            offset < remaining && (low...high).contains(bytes[index + offset])
        }
        switch lead {
        case 0xC2...0xDF:
            return continuation(1) ? 2 : 0
        case 0xE0:
            return continuation(1, 0xA0, 0xBF) && continuation(2) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF:
            return continuation(1) && continuation(2) ? 3 : 0
        case 0xED:
            return continuation(1, 0x80, 0x9F) && continuation(2) ? 3 : 0
        case 0xF0:
            return continuation(1, 0x90, 0xBF) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF1...0xF3:
            return continuation(1) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF4:
            return continuation(1, 0x80, 0x8F) && continuation(2) && continuation(3) ? 4 : 0
        default:
            return 0
        }
    }
}
