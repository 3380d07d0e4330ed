/// A message on the pipes between the gateway and a worker: a 4-byte big-endian payload length,
/// a 1-byte kind, then the payload. Lengths are checked against a limit before anything is
/// allocated, and every kind has a fixed layout (`Frame+Payloads.swift`), so a worker that writes
/// anything else is caught at once (`sandbox.protocol-error`).
struct Frame: Sendable, Hashable {
    /// What a frame carries, and who may send it.
    enum Kind: UInt8, Sendable, Hashable {
        /// Gateway → worker, once, first: `WorkerSetup` as JSON.
        case setup = 0x01
        /// Worker → gateway, once, after confining itself: `Confinement.Report` as JSON.
        case ready = 0x02
        /// Gateway → worker: an `ExtractionRequest`.
        case request = 0x10
        /// Gateway → worker: an `ExtractionRequest` whose document lies in the worker's `DocumentWindow`.
        case windowRequest = 0x11
        /// Worker → gateway: the request's id and its `MarkupGraph` as JSON.
        case graph = 0x20
        /// Worker → gateway: the request's id and why there is no graph.
        case failure = 0x21
    }

    /// Length (4 bytes) and kind (1 byte).
    static let headerSize = 5

    var kind: Kind
    var payload: [UInt8]

    /// The header for a frame of `kind` whose payload is `payloadLength` bytes.
    static func header(kind: Kind, payloadLength: Int) -> [UInt8] {
        let length = UInt32(truncatingIfNeeded: payloadLength)
        return [
            UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF),
            kind.rawValue,
        ]
    }

    /// The whole frame, header and payload.
    var bytes: [UInt8] { Frame.header(kind: kind, payloadLength: payload.count) + payload }

    /// Reads a header: the kind and the payload length, which must be at most `maxPayload`.
    static func parseHeader(_ header: some Collection<UInt8>, maxPayload: Int) throws(FrameError) -> (Kind, Int) {
        guard header.count == headerSize else { throw FrameError("a frame header has \(headerSize) bytes") }
        var iterator = header.makeIterator()
        var length = 0
        for _ in 0..<4 { length = length << 8 | Int(iterator.next() ?? 0) }
        let rawKind = iterator.next() ?? 0
        guard let kind = Kind(rawValue: rawKind) else {
            throw FrameError("unknown frame kind 0x\(String(rawKind, radix: 16))")
        }
        guard length <= maxPayload else {
            throw FrameError("a \(kind) frame of \(length) bytes exceeds the limit of \(maxPayload)")
        }
        return (kind, length)
    }
}

/// A frame that breaks the protocol: unknown kind, too long, truncated, or a payload that does not
/// have its kind's layout.
struct FrameError: Error, Sendable, Hashable, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
