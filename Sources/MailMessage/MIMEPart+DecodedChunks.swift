extension MIMEPart {
    /// Hands `body` the part's content with its Content-Transfer-Encoding removed, a chunk at a time, in order,
    /// without ever holding the whole decoded content: the bytes ``decodedBody(limit:)`` would return, in pieces of
    /// about `chunkSize` (quoted-printable is cut at line ends, base64 carries a cut quantum over). A body sent as it
    /// is (7bit, 8bit, binary, or an unknown encoding) is handed over in place, not copied.
    ///
    /// - Parameters:
    ///   - limit: the most decoded bytes handed over; the rest is not decoded.
    ///   - body: takes a chunk and whether it is the last one; returns false to stop.
    package func forEachDecodedChunk(
        limit: Int = .max, chunkSize: Int = 64 << 10, _ body: (UnsafeBufferPointer<UInt8>, _ isLast: Bool) -> Bool
    ) {
        var remaining = max(0, limit)
        let chunkSize = max(1024, chunkSize)
        let input = self.body
        /// Hands over `chunk` cut to what `remaining` allows; false when the caller or the limit stops.
        func deliver(_ chunk: UnsafeBufferPointer<UInt8>, inputLeft: Bool) -> Bool {
            let count = min(chunk.count, remaining)
            remaining -= count
            let isLast = !inputLeft || remaining == 0
            guard body(UnsafeBufferPointer(rebasing: chunk[..<count]), isLast) else { return false }
            return !isLast
        }
        if input.isEmpty || remaining == 0 {
            _ = body(UnsafeBufferPointer(start: nil, count: 0), true)
            return
        }
        switch contentTransferEncoding {
        case .base64:
            var decoder = Base64.StreamDecoder()
            // Sized for the part when it is smaller than a chunk, and not zeroed: the decoder writes what is handed over
            // (a zeroed 48 KiB buffer cost more than decoding a small message's part).
            let output = UnsafeMutableBufferPointer<UInt8>.allocate(
                capacity: Base64.StreamDecoder.capacity(forInput: min(chunkSize, input.count)))
            defer { output.deallocate() }
            var start = input.startIndex
            while start < input.endIndex {
                let end = min(input.endIndex, start + chunkSize)
                let more = end < input.endIndex
                let written = decoder.decode(input[start..<end], into: output, isFinal: !more)
                guard deliver(UnsafeBufferPointer(rebasing: output[..<written]), inputLeft: more) else { return }
                start = end
            }
        case .quotedPrintable:
            var output = UnsafeMutableBufferPointer<UInt8>(start: nil, count: 0)
            defer { output.deallocate() }
            var start = input.startIndex
            while start < input.endIndex {
                let end = QuotedPrintable.chunkEnd(in: input, from: start, preferredLength: chunkSize)
                if output.count < end - start {  // a chunk ends at a line end, perhaps past `chunkSize`
                    output.deallocate()
                    output = .allocate(capacity: end - start)
                }
                let more = end < input.endIndex
                let written = QuotedPrintable.decode(input[start..<end], into: output).written
                guard deliver(UnsafeBufferPointer(rebasing: output[..<written]), inputLeft: more) else { return }
                start = end
            }
        default:
            input.withUnsafeBufferPointer { whole in
                var start = 0
                while start < whole.count {
                    let end = min(whole.count, start + chunkSize)
                    guard deliver(UnsafeBufferPointer(rebasing: whole[start..<end]), inputLeft: end < whole.count) else {
                        return
                    }
                    start = end
                }
            }
        }
    }
}
