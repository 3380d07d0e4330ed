package import DNS
internal import Foundation
internal import Glibc
import Synchronization

/// A DNS server on 127.0.0.1 (UDP and TCP on one free port) that answers every query in one chosen way,
/// for the failures a real server will not produce on demand.
///
/// ```swift
/// try await withFakeDNSResponder(.responseCode(2)) { responder in
///     let client = DNSClient(configuration: .init(nameservers: [responder.nameserver]))
///     await #expect(throws: ...) { try await client.txtRecords(for: "x.example.test") }
/// }
/// ```
package final class FakeDNSResponder: Sendable {
    /// How every query is answered.
    package enum Behaviour: Sendable {
        /// NOERROR with these TXT records (each at the question's name).
        case answer([TXTRecord])
        /// This RCODE and no records: 2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED, ...
        case responseCode(UInt8)
        /// No answer at all, so the client times out.
        case silence
        /// Over UDP an empty answer with TC=1; over TCP the full answer.
        case truncatedOverUDP([TXTRecord])
        /// Over UDP first an answer with the wrong ID, then the right one.
        case mismatchedIDFirst([TXTRecord])
        /// Over UDP first an answer to another question (same ID), then the right one.
        case mismatchedQuestionFirst([TXTRecord])
        /// FORMERR (without OPT) to queries that carry EDNS, the answer to those that do not.
        case formatErrorForEDNS([TXTRecord])
        /// Replies computed from the raw query (`overTCP` tells the transport); each element is one message.
        case custom(@Sendable (_ query: [UInt8], _ overTCP: Bool) -> [[UInt8]])
    }

    /// Queries received so far.
    package struct Statistics: Sendable, Hashable {
        package var udpQueries = 0
        package var tcpQueries = 0
        package var queriesWithEDNS = 0
    }

    /// Where the responder listens: 127.0.0.1 and its port.
    package let nameserver: NameserverAddress
    private let server: Server

    /// Starts answering at once.
    package init(_ behaviour: Behaviour) throws {
        let (udp, tcp, port) = try Loopback.bindUDPAndTCP()
        var pipeDescriptors: [Int32] = [0, 0]
        guard pipe(&pipeDescriptors) == 0 else {
            close(udp)
            close(tcp)
            throw FixtureError("pipe() failed: \(String(cString: strerror(errno)))")
        }
        // Keep the descriptors out of processes other tests spawn meanwhile (dnsmasq).
        for descriptor in pipeDescriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        nameserver = try NameserverAddress(ipAddress: "127.0.0.1", port: port)
        server = Server(
            behaviour: behaviour, udp: udp, tcp: tcp, wakeRead: pipeDescriptors[0], wakeWrite: pipeDescriptors[1])
        server.start()
    }

    deinit { server.stop() }

    package var statistics: Statistics { server.statistics }

    /// A client configuration that asks only this responder.
    package func clientConfiguration(timeout: Duration = .seconds(1), attempts: Int = 1) -> DNSClient.Configuration {
        DNSClient.Configuration(nameservers: [nameserver], timeout: timeout, attempts: attempts)
    }

    /// Stops listening and closes the sockets; later queries to the port meet a closed port.
    package func stop() { server.stop() }
}

/// Runs `body` with a responder and stops it afterwards, whatever happens.
package func withFakeDNSResponder<T>(
    _ behaviour: FakeDNSResponder.Behaviour, _ body: (FakeDNSResponder) async throws -> T
) async throws -> T {
    let responder = try FakeDNSResponder(behaviour)
    do {
        let result = try await body(responder)
        responder.stop()
        return result
    } catch {
        responder.stop()
        throw error
    }
}

extension FakeDNSResponder {
    /// The sockets and the two serving threads. The threads hold this object, not the responder,
    /// so dropping the responder stops them.
    fileprivate final class Server: Sendable {
        let behaviour: Behaviour
        let udp: Int32
        let tcp: Int32
        let wakeRead: Int32
        let wakeWrite: Int32
        private let state = Mutex(State())
        private let threadsDone = DispatchSemaphore(value: 0)

        private struct State {
            var statistics = Statistics()
            var started = false
            var stopped = false
        }

        init(behaviour: Behaviour, udp: Int32, tcp: Int32, wakeRead: Int32, wakeWrite: Int32) {
            self.behaviour = behaviour
            self.udp = udp
            self.tcp = tcp
            self.wakeRead = wakeRead
            self.wakeWrite = wakeWrite
        }

        var statistics: Statistics { state.withLock { $0.statistics } }

        func start() {
            state.withLock { $0.started = true }
            Thread { [self] in
                serveUDP()
                threadsDone.signal()
            }.start()
            Thread { [self] in
                serveTCP()
                threadsDone.signal()
            }.start()
        }

        func stop() {
            let mustStop = state.withLock { state in
                defer { state.stopped = true }
                return !state.stopped
            }
            guard mustStop else { return }
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
            if state.withLock({ $0.started }) {
                threadsDone.wait()
                threadsDone.wait()
            }
            close(udp)
            close(tcp)
            close(wakeRead)
            close(wakeWrite)
        }

        /// Waits for `descriptor` to be readable; false when woken to stop.
        private func waitReadable(_ descriptor: Int32) -> Bool {
            var descriptors = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            ]
            while true {
                let ready = poll(&descriptors, 2, -1)
                if ready < 0 && errno == EINTR { continue }
                if ready < 0 || descriptors[1].revents != 0 { return false }
                if descriptors[0].revents != 0 { return true }
            }
        }

        private func serveUDP() {
            var buffer = [UInt8](repeating: 0, count: 65535)
            while waitReadable(udp) {
                var peer = sockaddr_storage()
                var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
                let received = buffer.withUnsafeMutableBytes { bytes in
                    withUnsafeMutablePointer(to: &peer) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            recvfrom(udp, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, &peerLength)
                        }
                    }
                }
                guard received > 0 else { continue }
                let query = Array(buffer[0..<received])
                record(query, overTCP: false)
                for reply in TestDNSMessage.replies(to: query, behaviour: behaviour, overTCP: false) {
                    _ = reply.withUnsafeBytes { bytes in
                        withUnsafePointer(to: &peer) {
                            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                                sendto(udp, bytes.baseAddress, bytes.count, 0, $0, peerLength)
                            }
                        }
                    }
                }
            }
        }

        private func serveTCP() {
            while waitReadable(tcp) {
                let connection = accept(tcp, nil, nil)
                guard connection >= 0 else { continue }
                defer { close(connection) }
                var timeout = timeval(tv_sec: 2, tv_usec: 0)
                setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                guard let prefix = readExactly(2, from: connection) else { continue }
                let length = Int(prefix[0]) << 8 | Int(prefix[1])
                guard let query = readExactly(length, from: connection) else { continue }
                record(query, overTCP: true)
                for reply in TestDNSMessage.replies(to: query, behaviour: behaviour, overTCP: true) {
                    var frame = [UInt8(reply.count >> 8), UInt8(reply.count & 0xFF)]
                    frame.append(contentsOf: reply)
                    _ = frame.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
            }
        }

        private func readExactly(_ count: Int, from connection: Int32) -> [UInt8]? {
            var buffer = [UInt8](repeating: 0, count: count)
            var received = 0
            while received < count {
                let result = buffer.withUnsafeMutableBytes {
                    recv(connection, $0.baseAddress! + received, count - received, 0)
                }
                if result < 0 && errno == EINTR { continue }
                guard result > 0 else { return nil }
                received += result
            }
            return buffer
        }

        private func record(_ query: [UInt8], overTCP: Bool) {
            let withEDNS = TestDNSMessage.hasEDNS(query)
            state.withLock { state in
                if overTCP { state.statistics.tcpQueries += 1 } else { state.statistics.udpQueries += 1 }
                if withEDNS { state.statistics.queriesWithEDNS += 1 }
            }
        }
    }
}
