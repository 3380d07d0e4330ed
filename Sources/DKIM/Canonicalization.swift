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
            if limit == nil {
                // The common case (l= is rare and discouraged): the whole body in one pass.
                let length = body.withUnsafeBytes { WholeRelaxedBody.hash($0, into: hasher) }
                return BodyHash(digest: try hasher.finish(), canonicalLength: length, signedRawBytes: body.count)
            }
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

/// Relaxed body canonicalization (RFC 6376 §3.4.4) of a whole body with no `l=` limit, written for
/// throughput: the result is the same as `RelaxedBody`'s, byte for byte.
///
/// Trailing WSP and empty lines are found first by scanning back from the end; everything before
/// that point ends in a content byte, so inside it every byte is kept as it is except where a TAB
/// stands, or an SP is followed by WSP or a line end (a WSP run longer than one SP, or WSP at the
/// end of a line). The scan compares sixteen bytes at a time, copying blocks that hold no such
/// place straight to the output buffer, and handles each place it finds as one token.
private enum WholeRelaxedBody {
    /// Output buffer size: small enough to stay in cache, large enough that SHA-256 runs on long blocks.
    static let capacity = 16 * 1024

    /// Hashes the canonical form of `body` into `hasher`.
    /// - Returns: the canonical length.
    static func hash(_ body: UnsafeRawBufferPointer, into hasher: SHA256Hasher) -> Int {
        guard let base = body.baseAddress else { return 0 }
        let count = body.count
        // The end of the content: drop WSP and CRLFs from the end. A CR is part of a CRLF exactly
        // when an LF follows it, so pairing from the end agrees with reading from the start.
        var end = count
        while end > 0 {
            let byte = base.load(fromByteOffset: end - 1, as: UInt8.self)
            if byte == 0x20 || byte == 0x09 {
                end -= 1
            } else if byte == 0x0A && end >= 2 && base.load(fromByteOffset: end - 2, as: UInt8.self) == 0x0D {
                end -= 2
            } else {
                break
            }
        }
        guard end > 0 else { return 0 }  // no content: the canonical body is empty (RFC 6376 errata 1384)

        let output = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        defer { output.deallocate() }
        // Flushed once fewer than 32 bytes are free: one step writes at most 16.
        let limit = capacity - 32
        var used = 0
        var total = 0
        let input = base.assumingMemoryBound(to: UInt8.self)
        let space = SIMD16<UInt8>(repeating: 0x20)
        let tab = SIMD16<UInt8>(repeating: 0x09)
        let below = SIMD16<UInt8>(repeating: 0x21)
        var index = 0
        while index < end {
            // Blocks of sixteen: `block` holds bytes index..<index+16 and `next` the byte after each.
            // `end` is never read past: the last byte compared is index+16 < end.
            while index &+ 17 <= end {
                let block = base.loadUnaligned(fromByteOffset: index, as: SIMD16<UInt8>.self)
                let next = base.loadUnaligned(fromByteOffset: index &+ 1, as: SIMD16<UInt8>.self)
                // A TAB, or an SP before WSP, CR, LF or another control byte. An SP before a control byte
                // other than a line end is kept, but the token step decides that.
                let care = ((block .== space) .& (next .< below)) .| (block .== tab)
                output.storeBytes(of: block, toByteOffset: used, as: SIMD16<UInt8>.self)
                if !any(care) {
                    used &+= 16
                    index &+= 16
                    if used > limit { flush(output, &used, &total, hasher) }
                    continue
                }
                // The bytes before the first such place were copied as they are.
                let marks = SIMD16<UInt8>(repeating: 0).replacing(with: 0xFF, where: care)
                let lanes = unsafeBitCast(marks, to: SIMD2<UInt64>.self)
                let low = UInt64(littleEndian: lanes[0])
                let high = UInt64(littleEndian: lanes[1])
                let clean = low != 0 ? low.trailingZeroBitCount &>> 3 : 8 &+ high.trailingZeroBitCount &>> 3
                used &+= clean
                index &+= clean
                break
            }
            guard index < end else { break }
            // One token: a WSP run, or one byte copied as it is.
            let byte = input[index]
            if byte == 0x20 || byte == 0x09 {
                var after = index &+ 1
                // Stops before `end`: the range ends in content.
                while input[after] == 0x20 || input[after] == 0x09 { after &+= 1 }
                // The run becomes one SP unless a line end follows (WSP at the end of a line is dropped).
                if !(input[after] == 0x0D && after &+ 1 < count && input[after &+ 1] == 0x0A) {
                    output.storeBytes(of: 0x20, toByteOffset: used, as: UInt8.self)
                    used &+= 1
                }
                index = after
            } else {
                output.storeBytes(of: byte, toByteOffset: used, as: UInt8.self)
                used &+= 1
                index &+= 1
            }
            if used > limit { flush(output, &used, &total, hasher) }
        }
        output.storeBytes(of: 0x0D, toByteOffset: used, as: UInt8.self)
        output.storeBytes(of: 0x0A, toByteOffset: used + 1, as: UInt8.self)
        used += 2
        flush(output, &used, &total, hasher)
        return total
    }

    @inline(__always)
    private static func flush(
        _ output: UnsafeMutableRawPointer, _ used: inout Int, _ total: inout Int, _ hasher: SHA256Hasher
    ) {
        hasher.update(UnsafeRawBufferPointer(start: output, count: used))
        total += used
        used = 0
    }
}
