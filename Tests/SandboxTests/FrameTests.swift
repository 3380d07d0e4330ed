import Markup
import Testing

@testable import Sandbox

/// The framing is strict: anything but the exact layout is a protocol error.
@Suite("Frames")
struct FrameTests {
    @Test func requestRoundTrip() throws {
        let request = ExtractionRequest(
            id: 0x0102_0304_0506_0708, kind: .html, encoding: "windows-1252",
            limits: .init(maxItems: 5, maxDepth: 6, maxResponseBytes: 7), document: Array("<p>caf\u{E9}</p>".utf8))
        let bytes = request.framePrefix + request.document
        #expect(Array(bytes.prefix(5)) == [0, 0, 0, 22 + 12 + 12, 0x10])  // fixed fields, label, document
        let (kind, length) = try Frame.parseHeader(bytes.prefix(Frame.headerSize), maxPayload: 1 << 20)
        #expect(kind == .request)
        #expect(length == bytes.count - Frame.headerSize)
        #expect(try ExtractionRequest(framePayload: Array(bytes.dropFirst(Frame.headerSize))) == request)
    }

    @Test func windowRequestCarriesThePlaceInsteadOfTheDocument() throws {
        let request = ExtractionRequest(
            id: 9, kind: .email, encoding: "utf-8", limits: .init(maxItems: 1, maxDepth: 2, maxResponseBytes: 3),
            document: [UInt8](repeating: 0x41, count: 70_000))
        let bytes = request.windowFrame(offset: 0x0102_0304)
        let (kind, length) = try Frame.parseHeader(bytes.prefix(Frame.headerSize), maxPayload: 1 << 20)
        #expect(kind == .windowRequest)
        #expect(length == ExtractionRequest.fixedPayloadSize + 5 + 8)
        #expect(bytes.count == Frame.headerSize + length)
        // The same fields and label as the pipe's request, then the place.
        let fieldsAndLabel = bytes.prefix(Frame.headerSize + ExtractionRequest.fixedPayloadSize + 5)
        let pipeFieldsAndLabel = request.framePrefix.dropFirst(Frame.headerSize)
        #expect(Array(fieldsAndLabel.dropFirst(Frame.headerSize)) == Array(pipeFieldsAndLabel))
        let place = try ExtractionRequest.parseWindowPlace(bytes.suffix(8))
        #expect(place.offset == 0x0102_0304)
        #expect(place.length == 70_000)
        #expect(throws: FrameError.self) { try ExtractionRequest.parseWindowPlace(bytes.suffix(9)) }
    }

    @Test(
        "headers with an unknown kind or a length over the limit are refused",
        arguments: [
            [0, 0, 0, 1, 0x7F] as [UInt8],  // unknown kind
            [0, 0x10, 0, 1, 0x20],  // 1 MiB + 1 > limit
            [0xFF, 0xFF, 0xFF, 0xFF, 0x20],
            [0, 0, 0, 0],  // short
        ])
    func badHeaders(header: [UInt8]) {
        #expect(throws: FrameError.self) { try Frame.parseHeader(header, maxPayload: 1 << 20) }
    }

    @Test func requestWithBadFields() {
        var payload = [UInt8](repeating: 0, count: ExtractionRequest.fixedPayloadSize)
        payload[8] = 2
        #expect((try? ExtractionRequest(framePayload: payload))?.encoding == nil)
        payload[8] = 9  // no such kind
        #expect(throws: FrameError.self) { try ExtractionRequest(framePayload: payload) }
        #expect(throws: FrameError.self) { try ExtractionRequest(framePayload: Array(payload.prefix(20))) }
        payload[8] = 2
        payload[21] = 4  // a label longer than what follows
        #expect(throws: FrameError.self) { try ExtractionRequest(framePayload: payload + [0x41]) }
        #expect(throws: FrameError.self) { try ExtractionRequest(framePayload: payload + [0x41, 0x20, 0x41, 0x41]) }
        payload[21] = 65  // longer than any label may be
        #expect(throws: FrameError.self) {
            try ExtractionRequest(framePayload: payload + Array(repeating: 0x41, count: 65))
        }
    }

    @Test func unusableLabelsAreDropped() {
        #expect(ExtractionRequest(id: 1, kind: .html, encoding: "utf 8", document: []).encoding == nil)
        #expect(
            ExtractionRequest(id: 1, kind: .html, encoding: String(repeating: "a", count: 65), document: []).encoding
                == nil)
        #expect(ExtractionRequest(id: 1, kind: .html, encoding: "ISO-8859-15", document: []).encoding == "ISO-8859-15")
    }

    @Test func answers() throws {
        let graph = MarkupGraph(diagnostics: [Diagnostic(.warning, Diagnostic.Code("test.fact"), path: "a", "b")])
        let frame = try #require(WorkerAnswer.graphFrame(id: 42, graph: graph, maxBytes: 1 << 20))
        let (kind, length) = try Frame.parseHeader(frame.prefix(Frame.headerSize), maxPayload: 1 << 20)
        #expect(kind == .graph && length == frame.count - Frame.headerSize)
        let answer = try WorkerAnswer(kind: .graph, payload: Array(frame.dropFirst(Frame.headerSize)))
        #expect(answer == .graph(id: 42, encoded: GraphWire.encode(graph)[...]))
        #expect(try GraphWire.decode(GraphWire.encode(graph)[...]) == graph)
        // A graph larger than the answer limit is not framed (the worker sends sandbox.too-large instead).
        #expect(WorkerAnswer.graphFrame(id: 42, graph: graph, maxBytes: GraphWire.encode(graph).count - 1) == nil)

        let failure = WorkerAnswer.failureFrame(id: 7, code: .tooLarge, reason: "too big")
        #expect(
            try WorkerAnswer(kind: .failure, payload: Array(failure.dropFirst(Frame.headerSize)))
                == .failure(id: 7, code: .tooLarge, reason: "too big"))

        #expect(throws: FrameError.self) { try WorkerAnswer(kind: .graph, payload: [1, 2, 3]) }
        #expect(throws: FrameError.self) { try WorkerAnswer(kind: .ready, payload: []) }
        #expect(throws: FrameError.self) { try WorkerAnswer(kind: .failure, payload: [0, 0, 0, 0, 0, 0, 0, 1, 99]) }
        #expect(throws: FrameError.self) {  // not UTF-8
            try WorkerAnswer(kind: .failure, payload: [0, 0, 0, 0, 0, 0, 0, 1, 1, 0xFF])
        }
    }

    @Test("a long reason is cut on a character boundary")
    func reasonCut() throws {
        let reason = String(repeating: "é", count: Frame.maxReasonBytes)  // 2 bytes each
        let frame = WorkerAnswer.failureFrame(id: 1, code: .tooLarge, reason: reason)
        guard case .failure(_, _, let cut) = try WorkerAnswer(kind: .failure, payload: Array(frame.dropFirst(5))) else {
            Issue.record("not a failure")
            return
        }
        #expect(cut.utf8.count <= Frame.maxReasonBytes)
        #expect(cut.allSatisfy { $0 == "é" })
    }
}
