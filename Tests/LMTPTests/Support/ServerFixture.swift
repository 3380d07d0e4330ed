import Logging
import NIOCore
import ServiceLifecycle
import Testing

@testable import LMTP

/// Runs an `LMTPServer` on an ephemeral port of 127.0.0.1 inside a `ServiceGroup` for the duration of `body`,
/// then shuts it down gracefully and waits for it to stop.
func withServer<T: Sendable>(
    _ configure: (inout LMTPServer.Configuration) -> Void = { _ in },
    handler: RecordingHandler = RecordingHandler(),
    _ body: (_ port: Int, _ group: ServiceGroup) async throws -> T
) async throws -> T {
    var configuration = LMTPServer.Configuration()
    configuration.port = 0
    configuration.hostname = "lmtp.test"
    configure(&configuration)
    let (ports, portsContinuation) = AsyncStream.makeStream(of: Int.self)
    let logger = Logger(label: "lmtp-test")
    let server = LMTPServer(configuration: configuration, handler: handler, logger: logger) { address in
        portsContinuation.yield(address.port ?? 0)
        portsContinuation.finish()
    }
    let group = ServiceGroup(
        configuration: ServiceGroupConfiguration(services: [server], gracefulShutdownSignals: [], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        // A Unix socket has no port: 0 then.
        guard let port = await iterator.next(), port > 0 || configuration.socketPath != nil else {
            tasks.cancelAll()
            throw TestClientError(message: "the server did not start listening")
        }
        let result: T
        do {
            result = try await body(port, group)
        } catch {
            tasks.cancelAll()
            throw error
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
        return result
    }
}

extension String {
    /// The string's UTF-8 bytes.
    var bytes: [UInt8] { Array(utf8) }
}
