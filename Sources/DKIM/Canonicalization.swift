/// Header and body canonicalization (RFC 6376 §3.4).
enum Canonicalization {
    /// The header field as it enters the header hash (RFC 6376 §3.4.1, §3.4.2), CRLF included.
    static func header(_ raw: ArraySlice<UInt8>, _ mode: DKIMSignature.Canonicalization) -> [UInt8] {
        switch mode {
        case .simple: return Array(raw)
        case .relaxed:
            var out = relaxedHeaderWithoutCRLF(raw)
            out.append(0x0D)
            out.append(0x0A)
            return out
        }
    }

    /// RFC 6376 §3.4.2: lower-case the name, unfold, collapse WSP runs to one SP, drop WSP at the
    /// end of the value and around the colon. No trailing CRLF.
    static func relaxedHeaderWithoutCRLF(_ raw: ArraySlice<UInt8>) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(raw.count)
        guard let colon = raw.firstIndex(of: 0x3A) else { return out }
        var nameEnd = colon
        while nameEnd > raw.startIndex && (raw[nameEnd - 1] == 0x20 || raw[nameEnd - 1] == 0x09) { nameEnd -= 1 }
        for byte in raw[raw.startIndex..<nameEnd] {
            out.append(byte >= 0x41 && byte <= 0x5A ? byte + 32 : byte)
        }
        out.append(0x3A)
        var pendingSpace = false
        var started = false
        for byte in raw[(colon + 1)...] {
            switch byte {
            case 0x0D, 0x0A: continue  // unfolding: CRLF disappears, the WSP after it remains
            case 0x20, 0x09: pendingSpace = true
            default:
                if pendingSpace && started { out.append(0x20) }
                pendingSpace = false
                started = true
                out.append(byte)
            }
        }
        return out
    }

    /// The hash of the canonicalized body (RFC 6376 §3.4.3, §3.4.4), optionally cut to `limit`
    /// canonicalized bytes (`l=`, §3.5).
    struct BodyHash: Sendable, Hashable {
        var digest: [UInt8]
        /// The length of the whole canonicalized body.
        var canonicalLength: Int
        /// How many bytes of the body as transmitted the hashed part covers.
        var signedRawBytes: Int
    }

    static func bodyHash(
        _ body: ArraySlice<UInt8>,
        _ mode: DKIMSignature.Canonicalization,
        limit: Int?
    ) throws(DKIMError) -> BodyHash {
        let hasher = try SHA256Hasher()
        switch mode {
        case .simple:
            let (length, signedRaw) = simpleBody(body, limit: limit, into: hasher)
            return BodyHash(digest: try hasher.finish(), canonicalLength: length, signedRawBytes: signedRaw)
        case .relaxed:
            var canonicalizer = RelaxedBody(limit: limit, hasher: hasher)
            body.withUnsafeBufferPointer { canonicalizer.consume($0) }
            let (length, signedRaw) = canonicalizer.finish(rawCount: body.count)
            return BodyHash(digest: try hasher.finish(), canonicalLength: length, signedRawBytes: signedRaw)
        }
    }

    /// Simple (§3.4.3): the body unchanged but for trailing empty lines, ending in exactly one CRLF.
    /// The body is already CRLF-normalized, so the canonical form is a prefix of the raw body plus CRLF.
    /// Returns the canonical length and how many raw bytes the hashed part covers.
    private static func simpleBody(_ body: ArraySlice<UInt8>, limit: Int?, into hasher: SHA256Hasher) -> (Int, Int) {
        var end = body.endIndex
        while end - body.startIndex >= 2 && body[end - 2] == 0x0D && body[end - 1] == 0x0A { end -= 2 }
        let content = body[body.startIndex..<end]
        let canonicalLength = content.count + 2
        let hashed = min(limit ?? canonicalLength, canonicalLength)
        let fromContent = min(hashed, content.count)
        hasher.update(content.prefix(fromContent))
        let crlf: [UInt8] = [0x0D, 0x0A]
        hasher.update(crlf.prefix(hashed - fromContent))
        let signedRaw = hashed >= canonicalLength ? body.count : fromContent
        return (canonicalLength, signedRaw)
    }
}

/// Relaxed body canonicalization (RFC 6376 §3.4.4) streamed into a hasher through a fixed buffer:
/// WSP runs become one SP, WSP before a line end is dropped, trailing empty lines are dropped,
/// and a non-empty body ends in one CRLF. Empty lines and spaces are held back until content
/// follows them, so nothing is ever taken back.
private struct RelaxedBody {
    private let hasher: SHA256Hasher
    private let limit: Int
    private var buffer: UnsafeMutablePointer<UInt8>
    private let capacity = 64 * 1024
    private var used = 0
    /// Canonical bytes produced so far (hashed or not).
    private var emitted = 0
    private var pendingLineEnds = 0
    private var pendingSpace = false
    private var hasContent = false
    /// Raw offset at which the limit was reached, if it was.
    private var rawOffsetAtLimit: Int? = nil
    private var rawIndex = 0

    init(limit: Int?, hasher: SHA256Hasher) {
        self.hasher = hasher
        self.limit = limit ?? Int.max
        buffer = .allocate(capacity: 64 * 1024)
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        if emitted < limit {
            buffer[used] = byte
            used += 1
            if used == capacity { flush() }
        } else if rawOffsetAtLimit == nil {
            rawOffsetAtLimit = rawIndex
        }
        emitted += 1
    }

    private mutating func flush() {
        hasher.update(UnsafeRawBufferPointer(start: buffer, count: used))
        used = 0
    }

    @inline(__always)
    private mutating func releasePending() {
        while pendingLineEnds > 0 {
            put(0x0D)
            put(0x0A)
            pendingLineEnds -= 1
        }
        if pendingSpace {
            put(0x20)
            pendingSpace = false
        }
    }

    mutating func consume(_ body: UnsafeBufferPointer<UInt8>) {
        guard let base = body.baseAddress else { return }
        let count = body.count
        var index = 0
        while index < count {
            let byte = base[index]
            if byte > 0x20 {
                // The common case: a run of ordinary bytes, copied straight through.
                if pendingLineEnds > 0 || pendingSpace {
                    rawIndex = index
                    releasePending()
                }
                if emitted < limit && limit == Int.max {
                    var runEnd = index + 1
                    while runEnd < count && base[runEnd] > 0x20 { runEnd += 1 }
                    var position = index
                    while position < runEnd {
                        let chunk = min(runEnd - position, capacity - used)
                        (buffer + used).update(from: base + position, count: chunk)
                        used += chunk
                        position += chunk
                        if used == capacity { flush() }
                    }
                    emitted += runEnd - index
                    hasContent = true
                    index = runEnd
                    continue
                }
                rawIndex = index
                put(byte)
                hasContent = true
                index += 1
            } else if byte == 0x20 || byte == 0x09 {
                pendingSpace = true
                index += 1
            } else if byte == 0x0D && index + 1 < count && base[index + 1] == 0x0A {
                pendingSpace = false  // WSP at the end of a line is ignored
                pendingLineEnds += 1
                index += 2
            } else {
                // Other control bytes (a lone CR, NUL, ...) are content.
                rawIndex = index
                releasePending()
                put(byte)
                hasContent = true
                index += 1
            }
        }
        rawIndex = count
    }

    /// Ends the body: one CRLF after non-empty content (§3.4.4). Returns the canonical length and how
    /// many raw bytes the hashed part covers.
    mutating func finish(rawCount: Int) -> (Int, Int) {
        if hasContent {
            rawIndex = rawCount
            put(0x0D)
            put(0x0A)
        }
        flush()
        buffer.deallocate()
        return (emitted, rawOffsetAtLimit ?? rawCount)
    }
}
