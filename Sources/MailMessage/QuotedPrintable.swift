internal import Glibc

/// A lenient quoted-printable decoder for MIME bodies (RFC 2045 §6.7).
///
/// `=XX` (upper or lower case hex) is the byte XX; `=` at the end of a line, optionally followed by
/// whitespace, is a soft line break and disappears with its CRLF; whitespace at the end of a line is
/// transport padding and is dropped (rule 3). Anything else that starts with `=` is malformed and
/// kept literally, as RFC 2045 §6.7 note (2) recommends. Never fails.
package enum QuotedPrintable {
    /// The result of decoding.
    package struct Decoded: Sendable {
        /// The decoded bytes.
        package var bytes: [UInt8]
        /// True when an `=` that was neither a hex escape nor a soft line break was kept literally.
        package var hadMalformedEscapes: Bool
        /// True when the output was cut at the limit.
        package var truncated: Bool
    }

    /// Decodes `input`, producing at most `limit` bytes.
    package static func decode(_ input: ArraySlice<UInt8>, limit: Int = .max) -> Decoded {
        let capacity = min(max(0, limit), input.count)
        var state = State()
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { output, initialized in
            initialized = input.withUnsafeBufferPointer { input in
                guard let source = input.baseAddress, let target = output.baseAddress else { return 0 }
                return decode(source, count: input.count, into: target, capacity: capacity, &state)
            }
        }
        return Decoded(bytes: bytes, hadMalformedEscapes: state.malformed, truncated: state.truncated)
    }

    /// Decodes `input` into `output`, which must have room for `input.count` bytes; returns how many were written
    /// and whether an `=` was malformed. For a body read in chunks that ``chunkEnd(in:from:preferredLength:)`` cut.
    package static func decode(
        _ input: ArraySlice<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>
    ) -> (written: Int, malformed: Bool) {
        var state = State()
        let written = input.withUnsafeBufferPointer { input -> Int in
            guard let source = input.baseAddress, let target = output.baseAddress else { return 0 }
            return decode(source, count: input.count, into: target, capacity: min(output.count, input.count), &state)
        }
        return (written, state.malformed)
    }

    /// Where to end a chunk of `input` that starts at `start` and should be about `preferredLength` long, so that
    /// decoding the chunks one by one gives what decoding the whole gives: just after the last line feed in it (an
    /// escape or a soft line break never spans a line end); in a line longer than that, not within an escape
    /// (`=` and two bytes) nor between a soft line break's `=` and its line end (`=`, padding, CRLF). Always past
    /// `start` when there is input left.
    package static func chunkEnd(in input: ArraySlice<UInt8>, from start: Int, preferredLength: Int) -> Int {
        let end = min(input.endIndex, start + max(3, preferredLength))
        guard end < input.endIndex else { return end }
        if let lineFeed = input[start..<end].lastIndex(of: .lineFeed) { return lineFeed + 1 }
        // Back off while the chunk would end in "=" and padding (a soft line break or a kept "=") or in "=" and one
        // byte (an escape): an "=" is decided by what follows it.
        var cut = end
        while cut > start {
            var padding = cut
            while padding > start && (input[padding - 1] == .space || input[padding - 1] == .tab) { padding -= 1 }
            if padding > start && input[padding - 1] == .equalsSign {
                cut = padding - 1
            } else if cut - 2 >= start && input[cut - 2] == .equalsSign {
                cut -= 2
            } else {
                break
            }
        }
        guard cut > start else {
            // Nowhere to cut in this stretch: take the line to its end.
            return input[end...].firstIndex(of: .lineFeed).map { $0 + 1 } ?? input.endIndex
        }
        return cut
    }

    private struct State {
        var malformed = false
        var truncated = false
    }

    /// The decoding loop over raw pointers; returns the number of bytes written. Text between `=`
    /// signs is copied a line at a time (`memchr`, `memcpy`), so plain runs cost little.
    private static func decode(
        _ source: UnsafePointer<UInt8>, count end: Int, into target: UnsafeMutablePointer<UInt8>, capacity: Int,
        _ state: inout State
    ) -> Int {
        var index = 0
        var written = 0

        /// Copies `source[from..<to]`; false (and `truncated`) when the limit cut it.
        func copy(_ from: Int, _ to: Int) -> Bool {
            let length = min(to - from, capacity - written)
            if length > 0 {
                (target + written).update(from: source + from, count: length)
                written += length
            }
            if length < to - from {
                state.truncated = true
                return false
            }
            return true
        }

        /// Copies a run without `=`, dropping whitespace at the end of each line (rule 3).
        func copyPlain(_ from: Int, _ to: Int) -> Bool {
            var lineStart = from
            while lineStart < to {
                guard let found = memchr(source + lineStart, Int32(UInt8.lineFeed), to - lineStart) else {
                    // The run ends inside a line: before an '=' its whitespace is content; at the very end
                    // of the input it is trailing whitespace.
                    var contentEnd = to
                    if to == end {
                        while contentEnd > lineStart
                            && (source[contentEnd - 1] == .space || source[contentEnd - 1] == .tab)
                        {
                            contentEnd -= 1
                        }
                    }
                    return copy(lineStart, contentEnd)
                }
                let lineFeed = UnsafeRawPointer(source).distance(to: UnsafeRawPointer(found))
                var lineEnd = lineFeed  // start of the line break (CRLF or LF)
                if lineEnd > lineStart && source[lineEnd - 1] == .carriageReturn { lineEnd -= 1 }
                var contentEnd = lineEnd
                while contentEnd > lineStart && (source[contentEnd - 1] == .space || source[contentEnd - 1] == .tab) {
                    contentEnd -= 1
                }
                guard copy(lineStart, contentEnd), copy(lineEnd, lineFeed + 1) else { return false }
                lineStart = lineFeed + 1
            }
            return true
        }

        while index < end {
            let equals =
                memchr(source + index, Int32(UInt8.equalsSign), end - index).map {
                    UnsafeRawPointer(source).distance(to: UnsafeRawPointer($0))
                } ?? end
            guard copyPlain(index, equals) else { return written }
            index = equals
            guard index < end else { break }
            // A soft line break: "=" [WSP...] CRLF (or LF), or "=" [WSP...] at the very end.
            var next = index + 1
            while next < end && (source[next] == .space || source[next] == .tab) { next += 1 }
            if next == end {
                index = end
                continue
            }
            if source[next] == .lineFeed {
                index = next + 1
                continue
            }
            if source[next] == .carriageReturn && next + 1 < end && source[next + 1] == .lineFeed {
                index = next + 2
                continue
            }
            guard written < capacity else {
                state.truncated = true
                return written
            }
            if index + 2 < end, let high = source[index + 1].hexDigitValue, let low = source[index + 2].hexDigitValue {
                target[written] = high << 4 | low
                index += 3
            } else {
                state.malformed = true  // kept literally (RFC 2045 §6.7 note 2)
                target[written] = .equalsSign
                index += 1
            }
            written += 1
        }
        return written
    }
}
