internal import Glibc
package import Logging
package import NIOCore
internal import NIOPosix
internal import ServiceLifecycle
import Synchronization

/// An LMTP listener (RFC 2033) for an MTA such as Postfix: the protocol engine, with the meaning of each delivery
/// left to an `LMTPDeliveryHandler`.
///
/// It speaks LHLO, MAIL, RCPT, DATA, RSET, NOOP, VRFY, HELP and QUIT with PIPELINING (RFC 2920), 8BITMIME
/// (RFC 6152), ENHANCEDSTATUSCODES (RFC 2034) and SIZE (RFC 1870); answers per recipient after DATA
/// (RFC 2033 §4.2); bounds command lines, message size, recipients, connections and client silence; and shuts
/// down gracefully: it stops accepting at once, closes idle connections with 421, and lets transactions in
/// progress finish for up to `drainTimeout`.
package struct LMTPServer: Service {
    /// Where to listen and the limits to apply.
    package struct Configuration: Sendable {
        /// The address to listen on.
        package var host = "127.0.0.1"
        /// The port to listen on; 0 lets the system choose (see `onListening`).
        package var port = 2424
        /// A Unix domain socket to listen on instead of `host` and `port`, for an MTA on the same machine (Postfix's
        /// `lmtp:unix:PATH`): no TCP on either side. A socket file left at the path by an earlier run is replaced (any
        /// other file is not); the file is made `socketFileMode` and removed when the listener stops.
        package var socketPath: String?
        /// The socket file's permissions: owner and group may connect. The file takes its directory's group when
        /// that directory has the setgid bit: a directory of the MTA's group gives the MTA the socket.
        package var socketFileMode: UInt32 = 0o660
        /// The group to give the socket file (a name, such as `postfix`), nil to leave it as created. The gateway must
        /// be root or a member of that group to give it.
        package var socketGroup: String?
        /// The longest `socketPath` Linux takes (`sun_path` holds 108 bytes, the last a NUL).
        package static let maxSocketPathBytes = 107
        /// The name in the greeting and the LHLO reply (RFC 5321 §4.1.1.1).
        package var hostname = "gateway"
        /// The largest message in octets: advertised as SIZE (RFC 1870 §4), refused at MAIL when declared
        /// larger, and enforced while the data arrives.
        package var maxMessageBytes = 10 << 20
        /// Recipients per transaction; more are answered `452 4.5.3` (RFC 5321 §4.5.3.1.10 requires at least 100).
        package var maxRecipients = 100
        /// Open connections; more are answered `421 4.3.2` and closed.
        package var maxConnections = 256
        /// How long the client may be silent while a command is due (RFC 5321 §4.5.3.2.7: at least 5 minutes).
        package var commandTimeout: Duration = .seconds(300)
        /// How long the client may be silent in the middle of the message data (RFC 5321 §4.5.3.2.5–6).
        package var dataTimeout: Duration = .seconds(600)
        /// On graceful shutdown, how long transactions in progress may take before connections are cut.
        package var drainTimeout: Duration = .seconds(30)
        /// Message buffers kept between transactions, in octets of capacity over all connections: what the server
        /// may hold on to after the mail has gone, so that the next messages are received without page faults
        /// (``MessageBufferPool``). 0 keeps none.
        package var retainedBufferBytes = 32 << 20

        /// The defaults above.
        package init() {}
    }

    private let configuration: Configuration
    private let handler: any LMTPDeliveryHandler
    private let logger: Logger
    private let onListening: @Sendable (SocketAddress) -> Void

    /// A server that will listen when run.
    /// - Parameters:
    ///   - handler: decides what each MAIL, RCPT and message means.
    ///   - onListening: called once the socket listens, with its address (the chosen port when `port` is 0).
    package init(
        configuration: Configuration, handler: any LMTPDeliveryHandler, logger: Logger,
        onListening: @escaping @Sendable (SocketAddress) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        self.onListening = onListening
    }

    /// Binds, serves until graceful shutdown (ServiceLifecycle) or task cancellation, and returns once every
    /// connection has ended.
    /// - Throws: `LMTPServerError` if the configuration is unusable or the socket cannot be bound.
    package func run() async throws {
        try validate(configuration)
        let registry = ConnectionRegistry(maximumConnections: configuration.maxConnections)
        let buffers = MessageBufferPool(retainedBytes: configuration.retainedBufferBytes)
        let listener: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, Never>, Never>
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            // The client may shut down its side after QUIT and still read the replies.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            // Message data arrives in large reads (up to 256 KiB each as the adaptive allocator grows, eight per
            // wake-up) and no more than four chunks wait for the session, so NIO's pool of eight receive buffers
            // is reused rather than fresh memory faulted in for every read (measured on the mixed stream: about
            // a tenth less server CPU than 64 KiB reads, four per wake-up, ten waiting).
            .childChannelOption(
                .recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 256 << 10)
            )
            .childChannelOption(.maxMessagesPerRead, value: 8)
        let wrap: @Sendable (any Channel) -> EventLoopFuture<NIOAsyncChannel<ByteBuffer, Never>> = { channel in
            channel.eventLoop.makeCompletedFuture {
                try NIOAsyncChannel<ByteBuffer, Never>(
                    wrappingChannelSynchronously: channel,
                    configuration: .init(backPressureStrategy: .init(lowWatermark: 2, highWatermark: 4)))
            }
        }
        if let socketPath = configuration.socketPath {
            // A socket file an earlier run left is replaced; one a running server listens on is not taken over.
            if LMTPServer.acceptsConnections(socketPath: socketPath) {
                throw LMTPServerError.cannotBind(socketPath: socketPath, underlying: SocketInUseError())
            }
            do {
                listener = try await bootstrap.bind(
                    unixDomainSocketPath: socketPath, cleanupExistingSocketFile: true, childChannelInitializer: wrap)
            } catch {
                throw LMTPServerError.cannotBind(socketPath: socketPath, underlying: error)
            }
            if let failure = Self.setOwnership(
                of: socketPath, mode: configuration.socketFileMode, group: configuration.socketGroup)
            {
                try? await listener.channel.close()
                unlink(socketPath)
                throw LMTPServerError.cannotBind(socketPath: socketPath, underlying: failure)
            }
        } else {
            do {
                listener = try await bootstrap
                    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                    .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                    .bind(host: configuration.host, port: configuration.port, childChannelInitializer: wrap)
            } catch {
                throw LMTPServerError.cannotBind(host: configuration.host, port: configuration.port, underlying: error)
            }
        }
        // The socket file goes with the listener (a TCP socket leaves nothing behind).
        defer { if let socketPath = configuration.socketPath { unlink(socketPath) } }
        if let address = listener.channel.localAddress {
            logger.info("LMTP listening", metadata: ["lmtp.address": "\(address)"])
            onListening(address)
        }
        let listenerChannel = listener.channel
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                do {
                    try await listener.executeThenClose { connections in
                        for try await connection in connections {
                            group.addTask { await serve(connection, registry: registry, buffers: buffers) }
                        }
                    }
                } catch is CancellationError {
                    // Cancelled: the connections are cancelled with this task and close themselves.
                }
                // The listener closed: graceful shutdown, cancellation, or a failure of the socket. Idle
                // connections were told; the others finish their transaction, for up to drainTimeout.
                registry.beginShutdown()
                if await !registry.waitUntilDrained(timeout: configuration.drainTimeout) {
                    logger.info("LMTP connections still open after the drain timeout; closing them")
                    group.cancelAll()
                }
            }
        } onGracefulShutdown: {
            registry.beginShutdown()
            listenerChannel.close(promise: nil)
        }
        logger.info("LMTP listener stopped")
    }

    /// Runs one connection to its end; never throws, so one connection cannot end the others.
    private func serve(
        _ connection: NIOAsyncChannel<ByteBuffer, Never>, registry: ConnectionRegistry, buffers: MessageBufferPool
    ) async {
        let id = nextConnectionID.add(1, ordering: .relaxed).newValue
        var logger = self.logger
        logger[metadataKey: "lmtp.connection"] = "\(id)"
        let channel = connection.channel
        let control = ConnectionControl(channel: channel, hostname: configuration.hostname, logger: logger)
        guard registry.admit(id, control: control) else {
            logger.info("LMTP connection refused: \(configuration.maxConnections) connections open")
            var buffer = channel.allocator.buffer(capacity: 64)
            LMTPReply.tooManyConnections(hostname: configuration.hostname).write(to: &buffer)
            try? await connection.executeThenClose { _ in try await channel.writeAndFlush(buffer).get() }
            return
        }
        defer { registry.remove(id) }
        logger.debug(
            "LMTP connection opened", metadata: ["lmtp.remote": "\(channel.remoteAddress.map { "\($0)" } ?? "?")"])
        let session = LMTPSession(remoteAddress: channel.remoteAddress, clientName: "", id: id)
        await withTaskCancellationHandler {
            do {
                try await connection.executeThenClose { inbound in
                    var session = LMTPConnection(
                        channel: channel, configuration: configuration, handler: handler, control: control,
                        buffers: buffers, session: session, logger: logger)
                    await session.run(inbound: inbound)
                }
            } catch {
                logger.debug("LMTP connection closed with an error: \(error)")
            }
        } onCancel: {
            control.cancel()
        }
        logger.debug("LMTP connection closed")
    }

    /// Whether something accepts connections on the Unix socket at `path` now (a file left by a stopped server
    /// refuses them). Without waiting: a listener whose backlog is full (EAGAIN) is listening all the same.
    static func acceptsConnections(socketPath path: String) -> Bool {
        let descriptor = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 || errno == EAGAIN
            }
        }
    }

    /// Another server listens on the socket path.
    private struct SocketInUseError: Error, CustomStringConvertible {
        var description: String { "another server accepts connections on it" }
    }

    /// Gives the socket file at `path` its group (if any) and `mode`; nil when both are done, else why not.
    private static func setOwnership(of path: String, mode: UInt32, group: String?) -> SocketFileError? {
        if let group {
            guard let entry = getgrnam(group) else {
                return SocketFileError(reason: "there is no group named '\(group)' (lmtp-socket-group)")
            }
            guard chown(path, uid_t.max, entry.pointee.gr_gid) == 0 else {  // uid -1: the owner stays
                let reason = String(cString: strerror(errno))
                return SocketFileError(
                    reason: "cannot give it the group '\(group)': \(reason) (the gateway must be root or a member of "
                        + "that group)")
            }
        }
        guard chmod(path, mode_t(mode)) == 0 else {
            return SocketFileError(reason: "cannot set its mode: \(String(cString: strerror(errno)))")
        }
        return nil
    }

    /// chown(2) or chmod(2) on the socket file failed, or its group does not exist.
    private struct SocketFileError: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
    }

    private func validate(_ configuration: Configuration) throws {
        guard !configuration.hostname.isEmpty, configuration.hostname.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else {
            throw LMTPServerError.invalidConfiguration("hostname must be printable ASCII without spaces")
        }
        guard (0...65535).contains(configuration.port) else {
            throw LMTPServerError.invalidConfiguration("port \(configuration.port) is not 0...65535")
        }
        let maxPath = Configuration.maxSocketPathBytes
        if let path = configuration.socketPath, path.isEmpty || path.utf8.count > maxPath {
            throw LMTPServerError.invalidConfiguration("a Unix socket path must have 1 to \(maxPath) bytes")
        }
        if configuration.socketGroup != nil, configuration.socketPath == nil {
            throw LMTPServerError.invalidConfiguration(
                "lmtp-socket-group applies to a Unix socket listener (lmtp: unix:PATH), not to HOST:PORT")
        }
        for (name, value) in [
            ("maxMessageBytes", configuration.maxMessageBytes), ("maxRecipients", configuration.maxRecipients),
            ("maxConnections", configuration.maxConnections),
        ] where value < 1 {
            throw LMTPServerError.invalidConfiguration("\(name) is \(value); it must be at least 1")
        }
        for (name, value) in [
            ("commandTimeout", configuration.commandTimeout), ("dataTimeout", configuration.dataTimeout),
        ] where value <= .zero {
            throw LMTPServerError.invalidConfiguration("\(name) is \(value); it must be positive")
        }
        guard configuration.retainedBufferBytes >= 0 else {
            throw LMTPServerError.invalidConfiguration(
                "retainedBufferBytes is \(configuration.retainedBufferBytes); it must be 0 or more")
        }
    }
}

/// Connection numbers for `LMTPSession.id`, unique in the process.
private let nextConnectionID = Atomic<UInt64>(0)
