import Testing

@testable import DKIM

/// The whole-body relaxed canonicalization (no `l=`, the fast path) must agree byte for byte with the
/// streaming one that `l=` uses, which follows RFC 6376 §3.4.4 one byte at a time.
@Suite("Relaxed body: fast path equals the streaming reference")
struct CanonicalizationEquivalenceTests {
    /// Pieces that exercise every rule: WSP runs of each kind, line ends, lone CR and LF, NUL,
    /// UTF-8, and words long enough to cross the eight-byte steps.
    static let pieces: [[UInt8]] = [
        Array("a".utf8), Array("word".utf8), Array("longer-word=3D\"x\"".utf8), Array("caf\u{E9}".utf8),
        [0x20], [0x20, 0x20], [0x09], [0x20, 0x09, 0x20], [0x0D, 0x0A], [0x0D, 0x0A, 0x0D, 0x0A], [0x0D], [0x0A],
        [0x00], [0x3D, 0x0D, 0x0A], [0x21], [0x20, 0x0D, 0x0A], [0x09, 0x0D, 0x0A], [0x0D, 0x0D, 0x0A],
    ]

    static func body(seed: UInt64, pieces count: Int) -> [UInt8] {
        var state = seed
        var body: [UInt8] = []
        for _ in 0..<count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            body += pieces[Int((state >> 33) % UInt64(pieces.count))]
        }
        return body
    }

    @Test("Random bodies", arguments: 0..<400)
    func randomBodies(seed: Int) throws {
        let body = Self.body(seed: UInt64(seed), pieces: seed % 50 == 0 ? 20_000 : seed % 120)
        // Any offset into the array: the word loop reads unaligned, and slices start anywhere.
        for start in [0, min(3, body.count)] {
            let slice = body[start...]
            let fast = try Canonicalization.bodyHash(slice, .relaxed, limit: nil)
            let reference = try Canonicalization.bodyHash(slice, .relaxed, limit: Int.max)
            #expect(fast == reference)
        }
    }

    @Test("Bodies of every length up to 40 bytes from one dense piece set")
    func shortBodies() throws {
        let alphabet: [UInt8] = [0x61, 0x20, 0x09, 0x0D, 0x0A]
        for length in 0...40 {
            for seed in 0..<40 {
                var state = UInt64(seed * 41 + length)
                var body: [UInt8] = []
                for _ in 0..<length {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    body.append(alphabet[Int((state >> 33) % 5)])
                }
                let fast = try Canonicalization.bodyHash(body[...], .relaxed, limit: nil)
                let reference = try Canonicalization.bodyHash(body[...], .relaxed, limit: Int.max)
                #expect(fast == reference)
            }
        }
    }
}

/// `h=` lists and domain names are split on UTF-8 bytes when ASCII (every tag value is); the result must
/// be what splitting the characters gives.
@Suite("Tag value splitting on bytes equals splitting characters")
struct TagSplittingEquivalenceTests {
    @Test("Random ASCII values", arguments: 0..<200)
    func randomValues(seed: Int) {
        let alphabet = Array("aZ-_.:  \t\r\n0Q".utf8)
        var state = UInt64(seed) &+ 7
        var bytes: [UInt8] = []
        for _ in 0..<(seed % 40) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            bytes.append(alphabet[Int((state >> 33) % UInt64(alphabet.count))])
        }
        let value = String(decoding: bytes, as: UTF8.self)
        let reference = value.split(separator: ":", omittingEmptySubsequences: false).map {
            $0.removingFoldingWhitespace.lowercased()
        }
        #expect(DKIMSignature.parseHeaderList(value) == reference)
        let labels = value.split(separator: ".", omittingEmptySubsequences: false)
        let valid =
            !value.isEmpty && value.utf8.count <= 253
            && labels.allSatisfy { label in
                !label.isEmpty && label.utf8.count <= 63
                    && label.utf8.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == 0x2D || $0 == 0x5F || $0 >= 0x80 }
            }
        #expect(DKIMSignature.isValidDomain(value) == valid)
    }

    @Test func nonASCIITakesTheGeneralPath() {
        #expect(DKIMSignature.parseHeaderList("Fröm : TO") == ["fröm", "to"])
        #expect(DKIMSignature.isValidDomain("bücher.example"))
        #expect(!DKIMSignature.isValidDomain("bücher..example"))
    }
}
