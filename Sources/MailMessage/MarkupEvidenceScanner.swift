/// Looks through text for the two byte sequences without which an HTML parser cannot produce schema.org markup:
/// `<script` (every JSON-LD block is a script element) and `itemscope` (every Microdata item is an element with
/// that attribute), in ASCII letters of either case. Libxml2, which the extractor parses with, lower-cases tag and
/// attribute names (so `<SCRIPT` and `ItemScope` count) and decodes character references only in attribute values
/// and text, never in names, so neither sequence can be written in a way that hides it from a byte scan of the
/// decoded text. It is deliberately wider than the extractor: any script (whatever its type, which may be written
/// with character references), the word in a comment or in text; so it can only say "maybe" where the extractor
/// then says "no", never "no" where the extractor finds an item.
///
/// The scan is fed the text a chunk at a time: the last bytes of each chunk are kept, so a sequence cut between two
/// chunks is still seen.
struct MarkupEvidenceScanner {
    enum Finding: Sendable, Hashable {
        case script
        case itemscope
    }

    /// The longest sequence looked for, `itemscope`, less one: what a chunk must leave for the next.
    private static let overlap = 8
    /// The end of the text seen so far: at most `overlap` bytes.
    private var tail: [UInt8] = []
    private(set) var bytesScanned = 0

    /// Scans the next chunk of text; the first finding, or nil.
    mutating func scan(_ chunk: UnsafeBufferPointer<UInt8>) -> Finding? {
        guard chunk.count > 0 else { return nil }
        bytesScanned += chunk.count
        if !tail.isEmpty {
            // A sequence that starts in the tail and ends in this chunk.
            let seam = tail + chunk.prefix(Self.overlap)
            if let found = seam.withUnsafeBufferPointer({ Self.find(in: $0) }) { return found }
        }
        if let found = Self.find(in: chunk) { return found }
        if chunk.count >= Self.overlap {
            tail = Array(chunk.suffix(Self.overlap))
        } else {
            tail = Array((tail + Array(chunk)).suffix(Self.overlap))
        }
        return nil
    }

    /// The first sequence found wholly inside `bytes`.
    ///
    /// Both sequences have `sc` (in either case) at the same distance from a byte that is `<` (in `<script`) or
    /// `m`/`M` (in `itemscope`): sixteen positions at a time are tested for that trio, which ordinary text seldom
    /// has, and only those that pass are compared whole.
    static func find(in bytes: UnsafeBufferPointer<UInt8>) -> Finding? {
        guard let base = bytes.baseAddress else { return nil }
        let count = bytes.count
        var index = 0
        if count >= 18 {
            let caseBit = SIMD16<UInt8>(repeating: 0x20)
            let lowerS = SIMD16<UInt8>(repeating: UInt8(ascii: "s"))
            let lowerC = SIMD16<UInt8>(repeating: UInt8(ascii: "c"))
            let lowerM = SIMD16<UInt8>(repeating: UInt8(ascii: "m"))
            let less = SIMD16<UInt8>(repeating: UInt8(ascii: "<"))
            let raw = UnsafeRawPointer(base)
            while index + 18 <= count {
                let first = raw.loadUnaligned(fromByteOffset: index, as: SIMD16<UInt8>.self)
                let second = raw.loadUnaligned(fromByteOffset: index + 1, as: SIMD16<UInt8>.self) | caseBit
                let third = raw.loadUnaligned(fromByteOffset: index + 2, as: SIMD16<UInt8>.self) | caseBit
                let candidates = (second .== lowerS) .& (third .== lowerC) .& ((first .== less) .| ((first | caseBit) .== lowerM))
                // The mask's lanes as two words: `any(_:)` reduces lane by lane (a call per block, measured).
                let lanes = unsafeBitCast(candidates, to: SIMD2<UInt64>.self)
                if lanes[0] | lanes[1] != 0 {
                    for lane in 0..<16 where candidates[lane] {
                        if let found = match(bytes, at: index + lane) { return found }
                    }
                }
                index += 16
            }
        }
        while index + 2 < count {
            if let found = match(bytes, at: index) { return found }
            index += 1
        }
        return nil
    }

    /// Whether `<script` starts at `position`, or `itemscope` has its `m` there.
    private static func match(_ bytes: UnsafeBufferPointer<UInt8>, at position: Int) -> Finding? {
        let byte = bytes[position]
        if byte == UInt8(ascii: "<") {
            return matches(bytes, from: position + 1, "script") ? .script : nil
        }
        if byte | 0x20 == UInt8(ascii: "m"), position >= 3 {
            return matches(bytes, from: position - 3, "itemscope") ? .itemscope : nil
        }
        return nil
    }

    /// Whether `word` (lower-case ASCII letters) is at `start`, ASCII case ignored.
    private static func matches(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, _ word: StaticString) -> Bool {
        let length = word.utf8CodeUnitCount
        guard start >= 0, bytes.count - start >= length else { return false }
        for offset in 0..<length where bytes[start + offset] | 0x20 != word.utf8Start[offset] { return false }
        return true
    }
}
