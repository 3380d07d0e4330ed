/// Reads the message after DATA up to the terminating `.` line, removing dot-stuffing (RFC 5321 §4.5.2), in one
/// pass over the input as it arrives.
///
/// Only `<CRLF>.<CRLF>` ends the data (RFC 5321 §4.1.1.4), and only CRLF ends a line (RFC 5321 §2.3.8): a bare LF
/// or a bare CR is kept as content, exactly as received, so a dot after it is neither the terminator nor stuffing.
/// A server that also ended the data at `<LF>.<LF>`, `<LF>.<CRLF>` or `<CRLF>.<LF>` would run the bytes after it as
/// commands of a new transaction that the client's MTA never saw ("SMTP smuggling", CVE-2023-51764 for Postfix,
/// CVE-2023-51766 for Exim, whose fixes accept only `<CRLF>.<CRLF>` the same way).
///
/// So the only bytes that need a decision are a `.` right after a CRLF; everything between two of them is copied
/// as it is, in one append. They are found sixteen positions at a time (``firstDotAfterCRLF(in:from:to:)``), not
/// line by line: a chunk of base64 or of text without such a dot is one scan and one copy into `message`, which is
/// the only copy of the message the reader makes.
///
/// Nothing but the message itself is buffered (no line buffer), so memory is bounded by `limit` whatever the
/// line lengths. Past the limit the reader keeps scanning for the end of the data and discards the rest
/// (RFC 1870 §6.3: the server then answers 552 after the data).
struct MessageDataReader {
    /// Where the reader is within the line structure of the data.
    private enum State {
        /// At the start of a line: a "." here is either stuffing or the terminator.
        case lineStart
        /// Inside a line, and no CRLF is pending: the next CRLF followed by "." is searched for.
        case midLine
        /// A CR ended the previous input chunk: CRLF if a LF follows, a lone CR (kept as content) otherwise.
        case pendingCR
        /// A line started with "." (after CRLF, or at the start of the data, whose CRLF ended the DATA command).
        case dot
        /// A line started with ".\r": the terminator if a LF follows.
        case dotCR
    }

    private var state = State.lineStart
    /// The message so far; emptied once the limit is passed.
    private(set) var message: [UInt8]
    /// The limit for `message`, in octets after unstuffing and line-end conversion.
    let limit: Int
    /// Whether the message grew past `limit`.
    private(set) var isOverLimit = false
    /// Whether the terminating line has been read.
    private(set) var isFinished = false

    /// A reader for a message of at most `limit` octets, written into `buffer` (emptied; its capacity is kept, so a
    /// buffer from ``MessageBufferPool`` is memory already mapped). `expectedSize` (the client's SIZE=, RFC 1870,
    /// which counts the message before stuffing) sizes the buffer once, up to `limit`, so it does not grow by
    /// doubling, a copy at each step.
    init(limit: Int, expectedSize: Int? = nil, buffer: [UInt8] = []) {
        self.limit = limit
        message = buffer
        message.removeAll(keepingCapacity: true)
        if let expectedSize, expectedSize > 0 { message.reserveCapacity(min(expectedSize, limit)) }
    }

    /// The message read, leaving the reader empty: the caller then holds the only reference to its buffer.
    mutating func takeMessage() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &message)
        return taken
    }

    /// Consumes input up to and including the terminating `.` line; returns how many octets were consumed
    /// (the rest, if any, is the next command).
    mutating func consume(_ input: UnsafeRawBufferPointer) -> Int {
        guard !isFinished, let base = input.baseAddress else { return 0 }
        let count = input.count
        var index = 0
        while index < count {
            switch state {
            case .lineStart:
                if input[index] == .dot {
                    state = .dot
                    index += 1
                } else {
                    state = .midLine
                }
            case .dot:
                if input[index] == .cr {
                    state = .dotCR
                    index += 1
                } else {
                    // Stuffing: the leading dot is dropped. A bare LF here (".\n") is content of the line, not its end.
                    state = .midLine
                }
            case .dotCR:
                if input[index] == .lf {
                    isFinished = true
                    return index + 1
                }
                append(.cr)  // ".\r" then something else: the CR is content of the unstuffed line
                state = .midLine
            case .pendingCR:
                if input[index] == .lf {
                    appendCRLF()
                    index += 1
                    state = .lineStart
                } else {
                    append(.cr)
                    state = .midLine
                }
            case .midLine:
                // Inside a line, the CRLF of a dot line must lie at or after `index` (a CR before it would have left
                // the state at .pendingCR or .lineStart).
                if let dot = Self.firstDotAfterCRLF(in: base, from: index, to: count) {
                    append(UnsafeRawBufferPointer(start: base + index, count: dot - index))
                    index = dot
                    state = .lineStart
                    continue
                }
                // No dot line starts in the rest of the chunk: all of it is content, except a CR at its very end,
                // which depends on the next chunk; a CRLF at its end leaves the next chunk at the start of a line.
                var end = count
                if input[count - 1] == .cr {
                    end = count - 1
                    state = .pendingCR
                } else if count - index >= 2, input[count - 1] == .lf, input[count - 2] == .cr {
                    state = .lineStart
                }
                append(UnsafeRawBufferPointer(start: base + index, count: end - index))
                index = count
            }
        }
        return count
    }

    /// The offset of the first "." in `start..<end` that follows a CR and a LF also in that range, or nil.
    ///
    /// Compares sixteen positions at a time with the bytes one and two before them, reduced as two words (as
    /// `RawMessage`'s bare-LF scan does): ordinary mail has such a dot on few lines, base64 never, so the search
    /// runs at the speed of the loads rather than a call per line.
    static func firstDotAfterCRLF(in base: UnsafeRawPointer, from start: Int, to end: Int) -> Int? {
        let cr = SIMD16<UInt8>(repeating: .cr)
        let lf = SIMD16<UInt8>(repeating: .lf)
        let dot = SIMD16<UInt8>(repeating: .dot)
        // `index` is the position of a candidate CR; its LF and dot follow it.
        var index = start
        while index &+ 34 <= end {
            let low = (base.loadUnaligned(fromByteOffset: index, as: SIMD16<UInt8>.self) .== cr)
                .& (base.loadUnaligned(fromByteOffset: index &+ 1, as: SIMD16<UInt8>.self) .== lf)
                .& (base.loadUnaligned(fromByteOffset: index &+ 2, as: SIMD16<UInt8>.self) .== dot)
            let high = (base.loadUnaligned(fromByteOffset: index &+ 16, as: SIMD16<UInt8>.self) .== cr)
                .& (base.loadUnaligned(fromByteOffset: index &+ 17, as: SIMD16<UInt8>.self) .== lf)
                .& (base.loadUnaligned(fromByteOffset: index &+ 18, as: SIMD16<UInt8>.self) .== dot)
            let lowLanes = unsafeBitCast(low, to: SIMD2<UInt64>.self)
            let highLanes = unsafeBitCast(high, to: SIMD2<UInt64>.self)
            if lowLanes[0] | lowLanes[1] | highLanes[0] | highLanes[1] != 0 {
                // Mask lanes are whole bytes (0 or 0xFF), the first in the low bits: the first set byte is the first
                // match.
                let (word, offset) =
                    lowLanes[0] != 0 ? (lowLanes[0], 0) : lowLanes[1] != 0 ? (lowLanes[1], 8)
                    : highLanes[0] != 0 ? (highLanes[0], 16) : (highLanes[1], 24)
                return index &+ offset &+ word.trailingZeroBitCount / 8 &+ 2
            }
            index &+= 32
        }
        while index &+ 2 < end {
            if base.load(fromByteOffset: index &+ 2, as: UInt8.self) == .dot,
                base.load(fromByteOffset: index &+ 1, as: UInt8.self) == .lf,
                base.load(fromByteOffset: index, as: UInt8.self) == .cr
            {
                return index &+ 2
            }
            index &+= 1
        }
        return nil
    }

    private mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !isOverLimit, bytes.count > 0 else { return }
        guard message.count + bytes.count <= limit else { return overflow() }
        message.append(contentsOf: bytes)
    }

    private mutating func append(_ byte: UInt8) {
        guard !isOverLimit else { return }
        guard message.count < limit else { return overflow() }
        message.append(byte)
    }

    private mutating func appendCRLF() {
        guard !isOverLimit else { return }
        guard message.count + 2 <= limit else { return overflow() }
        message.append(.cr)
        message.append(.lf)
    }

    private mutating func overflow() {
        isOverLimit = true
        message = []
    }
}
