internal import Glibc

/// Blocking exchanges of one query with one nameserver, each bounded by a deadline.
///
/// Runs only on a lookup's own thread (see `BlockingThread`), never on Swift's cooperative pool.
/// Sockets are non-blocking and every wait is a `poll()` of at most `pollSlice`, so a cancelled
/// lookup notices within that time.
struct DNSTransport {
    let server: NameserverAddress
    let cancellation: CancellationFlag

    /// Longest single `poll()` sleep, in milliseconds.
    static let pollSlice = 50

    /// Sends `query` in one datagram on a connected UDP socket and waits for its answer (RFC 1035 §4.2.1).
    ///
    /// The socket is connected so that the kernel drops datagrams from other addresses and reports an
    /// ICMP port-unreachable as `ECONNREFUSED` at once. Datagrams that are not the answer to this query
    /// (another ID, another question) are ignored and the wait goes on (RFC 5452 §9.1).
    /// - Throws: `.timeout` at the deadline, `.network` for socket errors, `.malformedResponse` for an
    ///   unreadable answer, `.cancelled`.
    func exchangeOverUDP(_ query: DNSQuery, timeout: Duration) throws(DNSError) -> DNSResponse {
        let deadline = ContinuousClock.now + timeout
        let socket = try Socket(family: server.family, type: SOCK_DGRAM, for: server)
        try connect(socket)
        let message = query.bytes
        let sent = message.withUnsafeBytes { send(socket.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == message.count else {
            throw DNSError.network(sent < 0 ? errno : EMSGSIZE, "sending the query to \(server) over UDP")
        }
        var buffer = [UInt8](repeating: 0, count: DNSWire.maximumMessageLength)
        while true {
            try wait(socket, for: Int16(POLLIN), until: deadline, timeout: timeout)
            let received = buffer.withUnsafeMutableBytes { recv(socket.descriptor, $0.baseAddress, $0.count, 0) }
            if received < 0 {
                let code = errno
                if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { continue }
                throw DNSError.network(code, "waiting for the answer from \(server) over UDP")
            }
            switch DNSResponse.match(Array(buffer[0..<received]), to: query) {
            case .unrelated:
                continue
            case .malformed(let error):
                throw DNSError(code: .malformedResponse, reason: "the UDP answer from \(server): \(error.reason)")
            case .response(let response):
                return response
            }
        }
    }

    /// Sends `query` over TCP with the 2-byte length prefix and reads one framed answer (RFC 1035 §4.2.2,
    /// RFC 7766 §8).
    /// - Throws: as `exchangeOverUDP`; an answer that does not match the question is `.malformedResponse`
    ///   (a TCP connection cannot be blindly spoofed, so a mismatch is a broken server).
    func exchangeOverTCP(_ query: DNSQuery, timeout: Duration) throws(DNSError) -> DNSResponse {
        let deadline = ContinuousClock.now + timeout
        let socket = try Socket(family: server.family, type: SOCK_STREAM, for: server)
        try connect(socket, until: deadline, timeout: timeout)
        let message = query.bytes
        var frame = [UInt8(message.count >> 8), UInt8(message.count & 0xFF)]
        frame.append(contentsOf: message)
        var sent = 0
        while sent < frame.count {
            try wait(socket, for: Int16(POLLOUT), until: deadline, timeout: timeout)
            let count = frame.withUnsafeBytes {
                send(socket.descriptor, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                let code = errno
                if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { continue }
                throw DNSError.network(code, "sending the query to \(server) over TCP")
            }
            sent += count
        }
        let prefix = try receive(exactly: 2, from: socket, until: deadline, timeout: timeout)
        let length = Int(prefix[0]) << 8 | Int(prefix[1])
        guard length >= DNSWire.headerLength else {
            throw DNSError(
                code: .malformedResponse,
                reason: "\(server) sent a TCP frame of \(length) bytes, shorter than a DNS header")
        }
        let answer = try receive(exactly: length, from: socket, until: deadline, timeout: timeout)
        switch DNSResponse.match(answer, to: query) {
        case .unrelated(let why):
            throw DNSError(code: .malformedResponse, reason: "\(server) answered over TCP with \(why)")
        case .malformed(let error):
            throw DNSError(code: .malformedResponse, reason: "the TCP answer from \(server): \(error.reason)")
        case .response(let response):
            return response
        }
    }

    /// Connects a UDP socket (which only sets the peer address, so it completes at once).
    private func connect(_ socket: borrowing Socket) throws(DNSError) {
        let result = server.withSocketAddress { Glibc.connect(socket.descriptor, $0, $1) }
        guard result == 0 else { throw DNSError.network(errno, "connecting a UDP socket to \(server)") }
    }

    /// Connects a non-blocking TCP socket, waiting for the handshake until the deadline.
    private func connect(
        _ socket: borrowing Socket, until deadline: ContinuousClock.Instant, timeout: Duration
    ) throws(DNSError) {
        let result = server.withSocketAddress { Glibc.connect(socket.descriptor, $0, $1) }
        if result == 0 { return }
        let code = errno
        guard code == EINPROGRESS || code == EINTR else {
            throw DNSError.network(code, "connecting to \(server) over TCP")
        }
        try wait(socket, for: Int16(POLLOUT), until: deadline, timeout: timeout)
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(socket.descriptor, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else {
            throw DNSError.network(errno, "connecting to \(server) over TCP")
        }
        guard error == 0 else { throw DNSError.network(error, "connecting to \(server) over TCP") }
    }

    private func receive(
        exactly count: Int, from socket: borrowing Socket, until deadline: ContinuousClock.Instant, timeout: Duration
    ) throws(DNSError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            try wait(socket, for: Int16(POLLIN), until: deadline, timeout: timeout)
            let result = buffer.withUnsafeMutableBytes {
                recv(socket.descriptor, $0.baseAddress! + received, count - received, 0)
            }
            if result == 0 {
                throw DNSError(
                    code: .network, reason: "\(server) closed the TCP connection before the whole answer arrived")
            }
            if result < 0 {
                let code = errno
                if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { continue }
                throw DNSError.network(code, "reading the answer from \(server) over TCP")
            }
            received += result
        }
        return buffer
    }

    /// Waits until the socket is ready for `events`, in slices of at most `pollSlice` so that
    /// cancellation is noticed.
    /// - Throws: `.timeout` at the deadline, `.cancelled`, `.network` if `poll()` fails.
    private func wait(
        _ socket: borrowing Socket, for events: Int16, until deadline: ContinuousClock.Instant, timeout: Duration
    ) throws(DNSError) {
        while true {
            if cancellation.isCancelled {
                throw DNSError(code: .cancelled, reason: "the lookup was cancelled while waiting for \(server)")
            }
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                throw DNSError(code: .timeout, reason: "no answer from \(server) within \(timeout)")
            }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = min(
                seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000,
                Int64(Self.pollSlice))
            var descriptor = pollfd(fd: socket.descriptor, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(milliseconds))
            if ready > 0 { return }
            if ready < 0 {
                let code = errno
                if code == EINTR { continue }
                throw DNSError.network(code, "waiting for \(server)")
            }
        }
    }
}
