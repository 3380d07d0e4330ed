#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Reads the message after DATA up to the terminating `.` line, removing dot-stuffing (RFC 5321 §4.5.2), in one
/// pass over the input as it arrives.
///
/// Only `<CRLF>.<CRLF>` ends the data (RFC 5321 §4.1.1.4), and only CRLF ends a line (RFC 5321 §2.3.8): a bare LF
/// or a bare CR is kept as content, exactly as received, so a dot after it is neither the terminator nor stuffing.
/// A server that also ended the data at `<LF>.<LF>`, `<LF>.<CRLF>` or `<CRLF>.<LF>` would run the bytes after it as
/// commands of a new transaction that the client's MTA never saw ("SMTP smuggling", CVE-2023-51764 for Postfix,
/// CVE-2023-51766 for Exim, whose fixes accept only `<CRLF>.<CRLF>` the same way).
///
/// Nothing but the message itself is buffered (no line buffer), so memory is bounded by `limit` whatever the
/// line lengths. Past the limit the reader keeps scanning for the end of the data and discards the rest
/// (RFC 1870 §6.3: the server then answers 552 after the data).
struct MessageDataReader {
    /// Where the reader is within the line structure of the data.
    private enum State {
        /// At the start of a line: a "." here is either stuffing or the terminator.
        case lineStart
        /// Inside a line.
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
    private(set) var message: [UInt8] = []
    /// The limit for `message`, in octets after unstuffing and line-end conversion.
    let limit: Int
    /// Whether the message grew past `limit`.
    private(set) var isOverLimit = false
    /// Whether the terminating line has been read.
    private(set) var isFinished = false

    /// A reader for a message of at most `limit` octets; `expectedSize` (the client's SIZE=, bounded here)
    /// only pre-sizes the buffer.
    init(limit: Int, expectedSize: Int? = nil) {
        self.limit = limit
        if let expectedSize { message.reserveCapacity(min(expectedSize, limit, 1 << 20)) }
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
                // The run of lines up to a CRLF followed by a "." (or by the end of the input) is copied as it is, in
                // one append: a line at a time, the appends cost more than the copying.
                var runEnd = index
                var lineEnded = false
                while runEnd < count, let found = memchr(base + runEnd, Int32(UInt8.lf), count - runEnd) {
                    let lineFeed = base.distance(to: UnsafeRawPointer(found))
                    runEnd = lineFeed + 1
                    // CRLF ends the line; a bare LF is content and the line goes on. (A CR at the end of the previous
                    // chunk went through .pendingCR, so the CR of a CRLF found here is in this chunk.)
                    guard lineFeed > index, input[lineFeed - 1] == .cr else { continue }
                    if runEnd == count || input[runEnd] == .dot {
                        lineEnded = true
                        break
                    }
                }
                if runEnd > index {
                    append(UnsafeRawBufferPointer(rebasing: input[index..<runEnd]))
                    index = runEnd
                    if lineEnded { state = .lineStart }
                } else if input[count - 1] == .cr {
                    append(UnsafeRawBufferPointer(rebasing: input[index..<(count - 1)]))
                    index = count
                    state = .pendingCR
                } else {
                    append(UnsafeRawBufferPointer(rebasing: input[index..<count]))
                    index = count
                }
            }
        }
        return count
    }

    private mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !isOverLimit else { return }
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
