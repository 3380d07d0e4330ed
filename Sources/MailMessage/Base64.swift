/// A lenient base64 decoder for MIME bodies and RFC 2047 `B` words (RFC 2045 §6.8, RFC 4648 §4).
///
/// Real senders wrap lines at any width, end lines with stray spaces, forget the padding or
/// concatenate separately padded chunks. The decoder skips every byte outside the alphabet (RFC 2045
/// §6.8: "Any characters outside of the base64 alphabet are to be ignored"), treats `=` as the end of
/// a quantum (so padded chunks can follow each other) and decodes whatever full bytes the bits left at
/// the end hold when padding is missing. It never fails.
package enum Base64 {
    /// The result of decoding.
    package struct Decoded: Sendable {
        /// The decoded bytes.
        package var bytes: [UInt8]
        /// True when bytes other than the alphabet, `=` and whitespace were skipped, or the last
        /// quantum was a single character (six bits: not a byte).
        package var hadJunk: Bool
        /// True when the output was cut at the limit.
        package var truncated: Bool
    }

    /// 0–63 for alphabet bytes, `padding` for `=`, `whitespace` for SP/HTAB/CR/LF, `junk` otherwise.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: junk, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        table[Int(UInt8(ascii: "="))] = padding
        for byte in [UInt8.space, .tab, .carriageReturn, .lineFeed] { table[Int(byte)] = whitespace }
        return table
    }()
    /// The four sextets of a quantum already in place: `quantumTable[k * 256 + byte]` is the bits `byte` adds
    /// as the quantum's character `k`, laid out so that the three bytes the quantum decodes to are the low three
    /// bytes of the OR of the four, in memory order (little-endian); a byte outside the alphabet sets the fourth.
    private static let quantumTable: [UInt32] = {
        var quantum = [UInt32](repeating: invalidQuantum, count: 4 * 256)
        for byte in 0..<256 {
            let value = UInt32(table[byte])
            guard value < 64 else { continue }
            quantum[byte] = value << 2
            quantum[256 + byte] = value >> 4 | (value & 0xF) << 12
            quantum[512 + byte] = (value >> 2) << 8 | (value & 0x3) << 22
            quantum[768 + byte] = value << 16
        }
        return quantum
    }()
    private static let invalidQuantum: UInt32 = 0x0100_0000
    private static let padding: UInt8 = 0xFD
    private static let whitespace: UInt8 = 0xFE
    private static let junk: UInt8 = 0xFF

    /// Decodes `input`, producing at most `limit` bytes.
    package static func decode(_ input: ArraySlice<UInt8>, limit: Int = .max) -> Decoded {
        let capacity = min(max(0, limit), input.count / 4 * 3 + 3)
        var state = State()
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { output, initialized in
            initialized = decode(input, into: output, state: &state, isFinal: true)
        }
        return Decoded(bytes: bytes, hadJunk: state.hadJunk, truncated: state.truncated)
    }

    /// A decoder fed its input a piece at a time, for a body read in chunks (the markup prefilter): a quantum
    /// cut between two pieces is carried over, so the output is the same as ``decode(_:limit:)`` of the whole.
    package struct StreamDecoder: Sendable {
        private var state = State()

        package init() {}

        /// True when bytes outside the alphabet were skipped so far.
        package var hadJunk: Bool { state.hadJunk }

        /// Decodes `input` into `output`, which must have room for `input.count / 4 * 3 + 3` bytes; returns how
        /// many were written. `isFinal` on the last piece writes out the bytes a partial last quantum holds.
        package mutating func decode(
            _ input: ArraySlice<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>, isFinal: Bool
        ) -> Int {
            Base64.decode(input, into: output, state: &state, isFinal: isFinal)
        }

        /// The most bytes one call can write for `count` input bytes, counting the up to three sextets carried over
        /// from the piece before (`count / 4 * 3 + 3` fell a byte short when a last piece of three bytes completed
        /// three carried ones: six sextets, four bytes).
        package static func capacity(forInput count: Int) -> Int { (count + 3) / 4 * 3 + 3 }
    }

    private struct State {
        var hadJunk = false
        var truncated = false
        /// Sextets of a quantum not yet complete, from earlier input.
        var accumulator: UInt32 = 0
        var sextets = 0
    }

    private static func decode(
        _ input: ArraySlice<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>, state: inout State, isFinal: Bool
    ) -> Int {
        input.withUnsafeBufferPointer { input in
            guard let target = output.baseAddress else { return 0 }
            guard let source = input.baseAddress else {
                guard isFinal else { return 0 }
                var (written, accumulator, sextets) = (0, state.accumulator, state.sextets)
                if !flush(&accumulator, &sextets, target, &written, output.count, &state) { state.hadJunk = true }
                (state.accumulator, state.sextets) = (accumulator, sextets)
                return written
            }
            return table.withUnsafeBufferPointer { table in
                quantumTable.withUnsafeBufferPointer { quanta in
                    decode(
                        source, count: input.count, into: target, capacity: output.count, table: table.baseAddress!,
                        quanta: quanta.baseAddress!, &state, isFinal: isFinal)
                }
            }
        }
    }

    /// The decoding loop over raw pointers: whole quanta of four alphabet bytes take the fast path,
    /// everything else (line ends, padding, junk) goes byte by byte.
    ///
    /// Runs of whole quanta go two at a time through ``quantumTable`` (four lookups and one test a quantum), each
    /// written with a four-byte store whose fourth byte the next quantum overwrites: so a call may change the one
    /// output byte just past what it says it wrote (within `capacity`), never a byte before.
    private static func decode(
        _ source: UnsafePointer<UInt8>, count: Int, into target: UnsafeMutablePointer<UInt8>, capacity: Int,
        table: UnsafePointer<UInt8>, quanta: UnsafePointer<UInt32>, _ state: inout State, isFinal: Bool
    ) -> Int {
        var index = 0
        var written = 0
        var accumulator = state.accumulator
        var sextets = state.sextets  // in the accumulator, 0...3
        defer {
            state.accumulator = accumulator
            state.sextets = sextets
        }
        @inline(__always)
        func quantum(at offset: Int) -> UInt32 {
            quanta[Int(source[offset])] | quanta[256 &+ Int(source[offset &+ 1])]
                | quanta[512 &+ Int(source[offset &+ 2])] | quanta[768 &+ Int(source[offset &+ 3])]
        }
        let output = UnsafeMutableRawPointer(target)
        while index < count {
            if sextets == 0 {
                // 6 bytes and the second store's spare byte: 7 of room.
                while index &+ 8 <= count && written &+ 7 <= capacity {
                    let first = quantum(at: index)
                    let second = quantum(at: index &+ 4)
                    guard (first | second) < invalidQuantum else { break }
                    output.storeBytes(of: first.littleEndian, toByteOffset: written, as: UInt32.self)
                    output.storeBytes(of: second.littleEndian, toByteOffset: written &+ 3, as: UInt32.self)
                    written &+= 6
                    index &+= 8
                }
                guard index < count else { break }
            }
            if sextets == 0 && index &+ 4 <= count && written &+ 3 <= capacity {
                let a = table[Int(source[index])]
                let b = table[Int(source[index &+ 1])]
                let c = table[Int(source[index &+ 2])]
                let d = table[Int(source[index &+ 3])]
                if a | b | c | d < 64 {
                    let value = UInt32(a) &<< 18 | UInt32(b) &<< 12 | UInt32(c) &<< 6 | UInt32(d)
                    target[written] = UInt8(truncatingIfNeeded: value &>> 16)
                    target[written &+ 1] = UInt8(truncatingIfNeeded: value &>> 8)
                    target[written &+ 2] = UInt8(truncatingIfNeeded: value)
                    written &+= 3
                    index &+= 4
                    continue
                }
            }
            let value = table[Int(source[index])]
            index &+= 1
            if value < 64 {
                accumulator = accumulator &<< 6 | UInt32(value)
                sextets &+= 1
                if sextets == 4 {
                    guard written &+ 3 <= capacity else {
                        state.truncated = true
                        return written
                    }
                    target[written] = UInt8(truncatingIfNeeded: accumulator &>> 16)
                    target[written &+ 1] = UInt8(truncatingIfNeeded: accumulator &>> 8)
                    target[written &+ 2] = UInt8(truncatingIfNeeded: accumulator)
                    written &+= 3
                    accumulator = 0
                    sextets = 0
                }
            } else if value == padding {
                if !flush(&accumulator, &sextets, target, &written, capacity, &state) { state.hadJunk = true }
                if state.truncated { return written }
            } else if value == junk {
                state.hadJunk = true
            }
        }
        if isFinal, !flush(&accumulator, &sextets, target, &written, capacity, &state) { state.hadJunk = true }
        return written
    }

    /// Writes the whole bytes held by a partial quantum (2 sextets: 1 byte, 3 sextets: 2 bytes).
    /// Returns false when a lone sextet had to be dropped.
    private static func flush(
        _ accumulator: inout UInt32, _ sextets: inout Int, _ target: UnsafeMutablePointer<UInt8>,
        _ written: inout Int, _ capacity: Int, _ state: inout State
    ) -> Bool {
        defer {
            accumulator = 0
            sextets = 0
        }
        let produced: Int
        switch sextets {
        case 2: produced = 1
        case 3: produced = 2
        default: return sextets == 0
        }
        let aligned = accumulator &<< UInt32(6 * (4 - sextets))
        for offset in 0..<produced {
            guard written < capacity else {
                state.truncated = true
                return true
            }
            target[written] = UInt8(truncatingIfNeeded: aligned &>> UInt32(16 - 8 * offset))
            written += 1
        }
        return true
    }
}
