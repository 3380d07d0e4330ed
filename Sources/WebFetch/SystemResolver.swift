package import NIOCore
package import NIOPosix
internal import Synchronization

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The system's resolver: `getaddrinfo(3)` for both families (so `/etc/hosts`, nsswitch and
/// `resolv.conf` apply as for any program), run on a thread pool because it blocks.
package struct SystemResolver: HostResolver {
    /// At most this many addresses are kept from one answer.
    static let maximumAnswers = 32

    private let threadPool: NIOThreadPool
    private let eventLoopGroup: any EventLoopGroup

    package init(
        threadPool: NIOThreadPool = .singleton,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.threadPool = threadPool
        self.eventLoopGroup = eventLoopGroup
    }

    package func addresses(of host: String, timeout: Duration) async throws(FetchError) -> [IPAddress] {
        // getaddrinfo cannot be cancelled: on timeout we stop waiting and leave the thread to finish.
        let eventLoop = eventLoopGroup.next()
        let promise = eventLoop.makePromise(of: [IPAddress].self)
        let settled = Mutex(false)
        let settle: @Sendable (Result<[IPAddress], any Error>) -> Void = { result in
            let first = settled.withLock { done in
                defer { done = true }
                return !done
            }
            if first { promise.completeWith(result) }
        }
        let timer = eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            settle(.failure(FetchError(code: .timeout, reason: "resolving \(host) took longer than \(timeout)")))
        }
        threadPool.runIfActive(eventLoop: eventLoop) { () throws(FetchError) -> [IPAddress] in
            try Self.getaddrinfo(host)
        }.whenComplete { result in
            timer.cancel()
            settle(result)
        }
        do {
            return try await promise.futureResult.get()
        } catch let error as FetchError {
            throw error
        } catch {
            throw FetchError(code: .dnsFailed, reason: "resolving \(host) failed: \(error)")
        }
    }

    /// Blocking lookup of both address families (AF_UNSPEC), TCP answers only, duplicates removed.
    static func getaddrinfo(_ host: String) throws(FetchError) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
        hints.ai_socktype = SOCK_STREAM
        #else
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = host.withCString { name in
            #if canImport(Glibc)
            Glibc.getaddrinfo(name, nil, &hints, &list)
            #else
            Darwin.getaddrinfo(name, nil, &hints, &list)
            #endif
        }
        guard status == 0, let first = list else {
            throw FetchError(
                code: .dnsFailed, reason: "\(host) does not resolve: \(Self.describe(status)); check the name")
        }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor, addresses.count < maximumAnswers {
            cursor = entry.pointee.ai_next
            guard let socketAddress = entry.pointee.ai_addr else { continue }
            let address: IPAddress
            switch Int32(socketAddress.pointee.sa_family) {
            case AF_INET:
                let v4 = UnsafeRawPointer(socketAddress).loadUnaligned(as: sockaddr_in.self)
                address = .v4(UInt32(bigEndian: v4.sin_addr.s_addr))
            case AF_INET6:
                let v6 = UnsafeRawPointer(socketAddress).loadUnaligned(as: sockaddr_in6.self)
                address = .v6(IPAddress.integer(v6.sin6_addr))
            default:
                continue
            }
            if !addresses.contains(address) { addresses.append(address) }
        }
        guard !addresses.isEmpty else {
            throw FetchError(code: .dnsFailed, reason: "\(host) has no IPv4 or IPv6 address")
        }
        return addresses
    }

    private static func describe(_ status: Int32) -> String {
        switch status {
        case EAI_NONAME: "no such name"
        case EAI_AGAIN: "temporary failure in name resolution, try again later"
        case EAI_FAIL: "the name server failed"
        default: String(cString: gai_strerror(status))
        }
    }
}
