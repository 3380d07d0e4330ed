internal import Glibc

extension Charset {
    /// Converts text in a charset to UTF-8 a piece at a time, through one iconv descriptor kept across pieces, for a
    /// body read in chunks (the markup prefilter). A sequence cut between two pieces is carried over, and an
    /// invalid one becomes U+FFFD and decoding goes on with the next byte, as ``Charset/convert(_:from:)`` does for
    /// the whole: fed the pieces of a text, it writes what converting the whole text writes.
    final class Transcoder {
        private let descriptor: iconv_t
        /// The bytes of a sequence the last piece ended inside.
        private var pending: [UInt8] = []
        private var output = [UInt8](repeating: 0, count: 16 * 1024)
        private static let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

        /// A transcoder from `name` (an iconv name), or nil when iconv does not know it.
        init?(from name: String) {
            guard let descriptor = Charset.open(name) else { return nil }
            self.descriptor = descriptor
        }

        deinit { iconv_close(descriptor) }

        /// Converts `input`, handing the UTF-8 to `emit` in pieces; `isFinal` on the last piece ends a cut sequence
        /// with U+FFFD and flushes the shift state.
        func convert(_ input: UnsafeBufferPointer<UInt8>, isFinal: Bool, emit: (UnsafeBufferPointer<UInt8>) -> Void) {
            if pending.isEmpty {
                run(input, isFinal: isFinal, emit: emit)
            } else {
                let joined = pending + Array(input)
                pending = []
                joined.withUnsafeBufferPointer { run($0, isFinal: isFinal, emit: emit) }
            }
        }

        private func run(_ input: UnsafeBufferPointer<UInt8>, isFinal: Bool, emit: (UnsafeBufferPointer<UInt8>) -> Void) {
            output.withUnsafeMutableBufferPointer { chunk in
                guard let chunkBase = chunk.baseAddress else { return }
                let chunkStart = UnsafeMutableRawPointer(chunkBase).assumingMemoryBound(to: CChar.self)
                var inPointer: UnsafeMutablePointer<CChar>? = input.baseAddress.map {
                    UnsafeMutableRawPointer(mutating: $0).assumingMemoryBound(to: CChar.self)
                }
                var inLeft = input.count
                // Each round consumes input, produces output, or skips a byte, so this ends.
                while true {
                    var outPointer: UnsafeMutablePointer<CChar>? = chunkStart
                    var outLeft = chunk.count
                    let result: Int
                    if inLeft > 0 {
                        result = iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                    } else if isFinal {
                        result = iconv(descriptor, nil, nil, &outPointer, &outLeft)  // flush shift state
                    } else {
                        return
                    }
                    let failure = result == -1 ? errno : 0
                    if outLeft < chunk.count { emit(UnsafeBufferPointer(start: chunkBase, count: chunk.count - outLeft)) }
                    if result != -1 {
                        if inLeft == 0 && isFinal { return }
                        continue
                    }
                    switch failure {
                    case E2BIG where outLeft < chunk.count:
                        continue  // the chunk is full: go round again with an empty one
                    case EINVAL where !isFinal:  // a sequence cut by the end of this piece: the next one completes it
                        if let start = inPointer { pending = Array(UnsafeRawBufferPointer(start: start, count: inLeft)) }
                        return
                    case EINVAL:  // an incomplete sequence at the very end
                        Self.replacement.withUnsafeBufferPointer(emit)
                        inLeft = 0
                    default:  // EILSEQ: an invalid sequence; skip one byte
                        Self.replacement.withUnsafeBufferPointer(emit)
                        if inLeft == 0 { return }
                        inPointer = inPointer.map { $0 + 1 }
                        inLeft -= 1
                    }
                }
            }
        }
    }
}
