import Foundation
import Ingestion
import Logging
import ServiceLifecycle
import Store

/// Tries spooled messages again: at start, every message spooled before this process started (left by a crash or
/// a stop before it was decided), then, every `retryIntervalSeconds`, those whose next attempt is due. Stops at
/// graceful shutdown between messages; a message being ingested finishes first.
struct SpoolRetryService: Service {
    let services: GatewayServices
    let logger: Logger
    let startedAt: Date

    func run() async throws {
        await recover()
        let interval = Duration.milliseconds(Int64(services.configuration.retryIntervalSeconds * 1000))
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                // Graceful shutdown does not cancel by itself: end the wait when it begins.
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            } catch {
                return
            }
            await retryDue()
        }
    }

    /// Messages left from before this start, whatever their next attempt time.
    func recover() async {
        let store = services.ingestor.environment.store
        var lastID: Int64 = 0
        var recovered = 0
        while !Task.isShuttingDownGracefully {
            // By id, so that no message is skipped whatever its next attempt time.
            let page: [SpooledMessage]
            do {
                page = try await store.spooledMessages(afterID: lastID, limit: 200)
            } catch {
                logger.error("cannot read the spool at start", metadata: ["error": "\(error)"])
                return
            }
            guard let last = page.last else { break }
            let batch = page.filter { $0.createdAt < startedAt && $0.updatedAt < startedAt }
            lastID = last.id
            for message in batch where !Task.isShuttingDownGracefully {
                await retry(message)
                recovered += 1
            }
        }
        if recovered > 0 { logger.info("recovered spooled messages", metadata: ["count": "\(recovered)"]) }
    }

    func retryDue() async {
        let store = services.ingestor.environment.store
        let due: [SpooledMessage]
        do {
            due = try await store.spooledMessages(dueBy: services.ingestor.environment.now(), limit: 200)
        } catch {
            logger.error("cannot read the spool", metadata: ["error": "\(error)"])
            return
        }
        for message in due where !Task.isShuttingDownGracefully {
            await retry(message)
        }
    }

    private func retry(_ message: SpooledMessage) async {
        let ingestor = services.ingestor
        do {
            let report = try await services.ingest(channel: message.channel.rawValue) { try await ingestor.retry(message) }
            if let report {
                logger.debug("spooled message decided", metadata: ["spool": "\(message.id)", "verdict": "\(report.verdict.rawValue)"])
            }
        } catch {
            logger.error("retrying a spooled message failed", metadata: ["spool": "\(message.id)", "error": "\(error)"])
        }
    }
}
