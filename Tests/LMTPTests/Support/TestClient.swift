import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// One reply as a client reads it.
struct Reply: Equatable, CustomStringConvertible {
    var code: Int
    /// The enhanced status code of the last line, if it has one.
    var enhancedCode: String?
    /// The text of each line, after the code and separator.
    var lines: [String]
    var description: String { "\(code) \(lines.joined(separator: " | "))" }
}

/// A raw TCP client for the tests, over NIO's async channel (no blocking call on the cooperative pool).
struct TestClient: ~Copyable {
    private var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    private var received: [UInt8] = []
    private(set) var sawEnd = false

    /// Connects to 127.0.0.1:`port` and runs `body` with the client; closes afterwards.
    static func with<T: Sendable>(port: Int, _ body: (inout TestClient) async throws -> T) async throws -> T {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                        wrappingChannelSynchronously: channel,
                        configuration: .init(isOutboundHalfClosureEnabled: true))
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var client = TestClient(inbound: inbound.makeAsyncIterator(), outbound: outbound)
            return try await body(&client)
        }
    }

    private init(
        inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) {
        self.inbound = inbound
        self.outbound = outbound
    }

    func send(_ text: String) async throws { try await send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) async throws { try await outbound.write(ByteBuffer(bytes: bytes)) }

    /// Shuts down the sending side (the server sees the end of input).
    func finishSending() { outbound.finish() }

    /// The next line without CRLF, or nil at the end of input.
    mutating func readLine() async throws -> String? {
        while true {
            if let lineFeed = received.firstIndex(of: UInt8(ascii: "\n")) {
                var line = Array(received[..<lineFeed])
                received.removeFirst(lineFeed + 1)
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            guard try await receiveMore() else { return nil }
        }
    }

    /// The next (possibly multi-line) reply, or nil at the end of input.
    mutating func readReply() async throws -> Reply? {
        var lines: [String] = []
        while let line = try await readLine() {
            let bytes = Array(line.utf8)
            guard bytes.count >= 3, let code = Int(String(line.prefix(3))) else {
                throw TestClientError(message: "not a reply line: \(line)")
            }
            lines.append(String(line.dropFirst(4)))
            if bytes.count == 3 || bytes[3] == UInt8(ascii: " ") {
                let words = lines.last?.split(separator: " ", maxSplits: 1) ?? []
                let enhanced = words.first.map(String.init).flatMap {
                    $0.first?.isNumber == true && $0.contains(".") ? $0 : nil
                }
                return Reply(code: code, enhancedCode: enhanced, lines: lines)
            }
        }
        if !lines.isEmpty { throw TestClientError(message: "input ended inside a reply") }
        return nil
    }

    /// Reads `count` replies; fails if input ends first.
    mutating func readReplies(_ count: Int) async throws -> [Reply] {
        var replies: [Reply] = []
        for _ in 0..<count {
            guard let reply = try await readReply() else {
                throw TestClientError(message: "input ended after \(replies.count) of \(count) replies")
            }
            replies.append(reply)
        }
        return replies
    }

    /// Every reply until the server closes the connection.
    mutating func readRepliesToEnd() async throws -> [Reply] {
        var replies: [Reply] = []
        while let reply = try await readReply() { replies.append(reply) }
        return replies
    }

    private mutating func receiveMore() async throws -> Bool {
        guard !sawEnd else { return false }
        do {
            guard let buffer = try await inbound.next() else {
                sawEnd = true
                return false
            }
            received += buffer.readableBytesView
            return true
        } catch let error as ChannelError where error == .inputClosed || error == .eof {
            sawEnd = true
            return false
        } catch let error as IOError where error.errnoCode == ECONNRESET {
            sawEnd = true
            return false
        }
    }
}

struct TestClientError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
