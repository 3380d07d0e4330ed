import Testing

@testable import Sandbox

@Suite("Frames")
struct FrameTests {
    @Test func requestRoundTrip() throws {
        let request = ExtractionRequest(
            id: 0x0102_0304_0506_0708, kind: .jsonLD, limits: .init(maxItems: 5, maxDepth: 6, maxResponseBytes: 7),
            document: Array("{\"a\":1}".utf8))
        let bytes = request.framePrefix + request.document
        let (kind, length) = try Frame.parseHeader(bytes.prefix(Frame.headerSize), maxPayload: 1 << 20)
        #expect(kind == .request)
        #expect(length == bytes.count - Frame.headerSize)
        #expect(try ExtractionRequest(framePayload: Array(bytes.dropFirst(Frame.headerSize))) == request)
    }
}
