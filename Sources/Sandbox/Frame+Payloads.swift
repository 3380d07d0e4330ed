internal import Markup

// The fixed layouts of the frames' payloads. Integers are big-endian.
//
//   request  id:u64 kind:u8 maxItems:u32 maxDepth:u32 maxResponseBytes:u32 encodingLength:u8
//            encoding:encodingLength (printable ASCII, 0 = none) document:rest
//   windowRequest  the same fields and label, then offset:u32 length:u32: the document lies in the
//            worker's document window at that offset (DocumentWindow), and nothing follows
//   graph    id:u64 graph:rest            (a MarkupGraph in GraphWire's binary form)
//   failure  id:u64 code:u8 reason:rest   (UTF-8, at most `Frame.maxReasonBytes`)
//   setup    json                         (WorkerSetup)
//   ready    json                         (Confinement.Report)

extension Frame {
    /// Longest reason a worker may give in a failure frame.
    static let maxReasonBytes = 1024
}

extension ExtractionRequest {
    /// The fixed fields before the encoding label: id, kind, the three limits, the label's length.
    static let fixedPayloadSize = 8 + 1 + 4 + 4 + 4 + 1

    /// The fixed fields of a request, as read by `parseFixedFields`.
    struct FixedFields {
        var id: UInt64
        var kind: DocumentKind
        var limits: Limits
        var encodingLength: Int
    }

    /// The frame header, the fixed fields and the encoding label; the document's bytes follow as
    /// they are, so a large document is written to the pipe without being copied.
    var framePrefix: [UInt8] {
        let label = Array((encoding ?? "").utf8)
        let payloadLength = ExtractionRequest.fixedPayloadSize + label.count + document.count
        var bytes = Frame.header(kind: .request, payloadLength: payloadLength)
        bytes.reserveCapacity(Frame.headerSize + ExtractionRequest.fixedPayloadSize + label.count)
        appendFixedFields(to: &bytes, label: label)
        return bytes
    }

    /// The fixed fields and the encoding label, as both kinds of request carry them.
    private func appendFixedFields(to bytes: inout [UInt8], label: [UInt8]) {
        bytes.appendBigEndian(id)
        bytes.append(kind.rawValue)
        bytes.appendBigEndian(limits.maxItems)
        bytes.appendBigEndian(limits.maxDepth)
        bytes.appendBigEndian(limits.maxResponseBytes)
        bytes.append(UInt8(label.count))  // at most maxEncodingBytes, checked by init
        bytes += label
    }

    /// The frame of a request whose document the gateway copied into the worker's window at `offset`: header, fixed
    /// fields, encoding label, then where the document lies.
    func windowFrame(offset: Int) -> [UInt8] {
        let label = Array((encoding ?? "").utf8)
        var bytes = Frame.header(
            kind: .windowRequest, payloadLength: ExtractionRequest.fixedPayloadSize + label.count + 8)
        bytes.reserveCapacity(Frame.headerSize + ExtractionRequest.fixedPayloadSize + label.count + 8)
        appendFixedFields(to: &bytes, label: label)
        bytes.appendBigEndian(UInt32(offset))
        bytes.appendBigEndian(UInt32(document.count))
        return bytes
    }

    /// Where a window request's document lies: the 8 bytes after its encoding label.
    static func parseWindowPlace(_ bytes: some Collection<UInt8>) throws(FrameError) -> (offset: Int, length: Int) {
        guard bytes.count == 8 else {
            throw FrameError("a window request ends with 8 bytes of place, got \(bytes.count)")
        }
        var reader = BigEndianReader(Array(bytes)[...])
        return (Int(reader.uint32()), Int(reader.uint32()))
    }

    /// The whole request frame's size: header, fixed fields, encoding label and document.
    var frameBytes: Int {
        Frame.headerSize + ExtractionRequest.fixedPayloadSize + (encoding?.utf8.count ?? 0) + document.count
    }

    /// What the request takes of a pipe when it is spliced in (`WorkerProcess.write(_:referencing:)`): the pipe
    /// then holds references to the gateway's pages, one pipe buffer per page touched, so the prefix takes a
    /// whole buffer and the document one per page it spans (it need not start on a page boundary).
    var pipeFootprint: Int {
        let page = ExtractionRequest.pipePageBytes
        return page + (document.count + page - 1) / page * page + (document.isEmpty ? 0 : page)
    }

    /// The size of a pipe buffer (a page on Linux).
    static let pipePageBytes = 4096

    /// Reads the fixed fields of a request payload; the encoding label and the document follow.
    static func parseFixedFields(_ fields: ArraySlice<UInt8>) throws(FrameError) -> FixedFields {
        guard fields.count >= fixedPayloadSize else {
            throw FrameError("a request frame needs at least \(fixedPayloadSize) bytes, got \(fields.count)")
        }
        var reader = BigEndianReader(fields)
        let id = reader.uint64()
        let rawKind = reader.uint8()
        guard let kind = DocumentKind(rawValue: rawKind) else { throw FrameError("unknown document kind \(rawKind)") }
        let limits = Limits(maxItems: reader.uint32(), maxDepth: reader.uint32(), maxResponseBytes: reader.uint32())
        let encodingLength = Int(reader.uint8())
        guard encodingLength <= maxEncodingBytes else {
            throw FrameError("an encoding label of \(encodingLength) bytes exceeds \(maxEncodingBytes)")
        }
        return FixedFields(id: id, kind: kind, limits: limits, encodingLength: encodingLength)
    }

    /// Reads the encoding label that follows the fixed fields (empty: none).
    static func parseEncoding(_ bytes: some Collection<UInt8>) throws(FrameError) -> String? {
        guard !bytes.isEmpty else { return nil }
        guard let label = validEncoding(String(decoding: bytes, as: UTF8.self)), label.utf8.count == bytes.count else {
            throw FrameError("the encoding label is not printable ASCII")
        }
        return label
    }

    /// Decodes a whole request payload.
    init(framePayload payload: [UInt8]) throws(FrameError) {
        let fields = try ExtractionRequest.parseFixedFields(payload[...])
        let labelEnd = ExtractionRequest.fixedPayloadSize + fields.encodingLength
        guard payload.count >= labelEnd else { throw FrameError("a request frame ends inside its encoding label") }
        let encoding = try ExtractionRequest.parseEncoding(payload[ExtractionRequest.fixedPayloadSize..<labelEnd])
        self.init(
            id: fields.id, kind: fields.kind, encoding: encoding, limits: fields.limits,
            document: Array(payload[labelEnd...]))
    }
}

/// A worker's answer to one request, as read off its pipe.
enum WorkerAnswer: Sendable, Hashable {
    /// Why a worker declined a request it read correctly.
    enum FailureCode: UInt8, Sendable, Hashable {
        /// The encoded graph is larger than the request's `maxResponseBytes`.
        case tooLarge = 1
        /// The handler ran out of memory and could tell.
        case memoryLimit = 2
    }

    /// The graph in `GraphWire`'s form, still encoded: the task that asked for it decodes it.
    case graph(id: UInt64, encoded: ArraySlice<UInt8>)
    case failure(id: UInt64, code: FailureCode, reason: String)

    var id: UInt64 {
        switch self {
        case .graph(let id, _), .failure(let id, _, _): id
        }
    }

    /// A graph frame for `id`: the header and the id, then the graph encoded straight after them
    /// (no copy of the encoded graph). Nil when the graph takes more than `maxBytes`.
    static func graphFrame(id: UInt64, graph: MarkupGraph, maxBytes: Int) -> [UInt8]? {
        var prefix = Frame.header(kind: .graph, payloadLength: 0)
        prefix.appendBigEndian(id)
        var bytes = GraphWire.encode(graph, after: prefix)
        let encodedCount = bytes.count - prefix.count
        guard encodedCount <= maxBytes else { return nil }
        let header = Frame.header(kind: .graph, payloadLength: 8 + encodedCount)
        bytes.replaceSubrange(0..<Frame.headerSize, with: header)
        return bytes
    }

    /// A failure frame for `id`; the reason is cut to `Frame.maxReasonBytes` on a character boundary.
    static func failureFrame(id: UInt64, code: FailureCode, reason: String) -> [UInt8] {
        var reasonBytes = Array(reason.utf8)
        if reasonBytes.count > Frame.maxReasonBytes {
            var cut = Frame.maxReasonBytes
            while cut > 0 && reasonBytes[cut] & 0xC0 == 0x80 { cut -= 1 }  // not inside a UTF-8 sequence
            reasonBytes.removeSubrange(cut...)
        }
        var bytes = Frame.header(kind: .failure, payloadLength: 8 + 1 + reasonBytes.count)
        bytes.appendBigEndian(id)
        bytes.append(code.rawValue)
        bytes.append(contentsOf: reasonBytes)
        return bytes
    }

    /// Decodes a graph or failure frame's payload.
    init(kind: Frame.Kind, payload: [UInt8]) throws(FrameError) {
        switch kind {
        case .graph:
            guard payload.count >= 8 else { throw FrameError("a graph frame of \(payload.count) bytes has no id") }
            var reader = BigEndianReader(payload[...])
            self = .graph(id: reader.uint64(), encoded: payload[8...])
        case .failure:
            guard payload.count >= 9, payload.count <= 9 + Frame.maxReasonBytes else {
                throw FrameError(
                    "a failure frame must have 9 to \(9 + Frame.maxReasonBytes) bytes, not \(payload.count)")
            }
            var reader = BigEndianReader(payload[...])
            let id = reader.uint64()
            let rawCode = reader.uint8()
            guard let code = FailureCode(rawValue: rawCode) else { throw FrameError("unknown failure code \(rawCode)") }
            guard let reason = String(validating: payload[9...], as: UTF8.self) else {
                throw FrameError("a failure frame's reason is not UTF-8")
            }
            self = .failure(id: id, code: code, reason: reason)
        default:
            throw FrameError("a \(kind) frame where an answer was expected")
        }
    }
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func appendBigEndian(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}

/// Reads big-endian integers from a slice whose length the caller has checked.
struct BigEndianReader {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.index = bytes.startIndex
    }

    mutating func uint8() -> UInt8 {
        defer { index += 1 }
        return index < bytes.endIndex ? bytes[index] : 0
    }

    mutating func uint32() -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 { value = value << 8 | UInt32(uint8()) }
        return value
    }

    mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(uint8()) }
        return value
    }
}
