import Foundation
import Ingestion
import LMTP
import Logging
import MailMessage
import Store
import Synchronization

/// What an LMTP delivery means to the gateway (DESIGN.md, "Owner and replay" and "What bad input gets"): first the
/// markup prefilter, once for the message: mail without evidence of markup (most of what an MX delivers) is answered
/// `250 2.0.0 delivered; no markup` for every recipient and only counted (`gateway_prefilter_total`): no spool
/// write, no DKIM lookup, no worker, no log entry. Otherwise each recipient is an owner; the message is spooled
/// durably for each recipient before any 250; then it is decided at once, and the per-recipient reply (RFC 2033
/// §4.2) says how:
///
/// - admitted or rejected: `250 2.0.0` with the verdict, the codes and the log entry (a confirmation without
///   admissible markup is still delivered mail; `lmtp-refuse-rejected` answers 550 instead);
/// - a DKIM temperror (a key lookup that failed for now): `451 4.4.3`, the spool entry removed, so the MTA retries;
/// - a decision slower than `lmtp-reply-deadline-seconds`: `250 2.0.0 queued`, the decision continuing from the spool;
/// - the queue full: `452 4.3.1`; the spool unwritable, or the store known to be down: `451 4.3.0` (at MAIL FROM
///   already while it is down);
/// - a quota of its sender domain or of the recipient used up: `452 4.2.1` before anything is spooled, so the MTA keeps
///   the message and delivers it again later (each recipient's delivery counts as one message).
///
/// Several nodes: the spool entry is claimed by this node for `spool-lease-seconds`, renewed while it decides
/// (``SpoolWorker``). If this node dies after its 250, the claim runs out and another node's spool worker decides the
/// message; if both get to decide it, the store keeps only the first decision (`store.spool-entry-gone`).
struct LMTPDelivery: LMTPDeliveryHandler {
    let services: GatewayServices
    let logger: Logger

    func mailFrom(_ sender: String, declaredSize: Int?, session: LMTPSession) async -> LMTPReply {
        if !services.storeHealth.isAvailable { return Self.storeUnavailable }
        if services.gate.isFull { return Self.busy }
        return .ok()
    }

    func recipient(_ address: String, session: LMTPSession) async -> LMTPReply {
        guard OwnerAddress(address) != nil else {
            return LMTPReply(code: 550, enhancedCode: "5.1.3", text: "not a mailbox address an owner can have")
        }
        return LMTPReply(code: 250, enhancedCode: "2.1.5", text: "OK")
    }

    func deliver(_ envelope: LMTPEnvelope) async -> [LMTPReply] {
        // A bare LF or CR in the data is content (the LMTP reader ends lines and the data only at CRLF): the
        // prefilter reads the message as ingestion will, as if bare LFs were CRLF.
        let hasMarkup = services.ingestor.prefilter(envelope.message).hasMarkup
        services.metrics.recordPrefilter(channel: "lmtp", hasMarkup: hasMarkup)
        guard hasMarkup else {
            for _ in envelope.recipients { services.metrics.recordLMTPReply(code: Self.withoutMarkup.code) }
            return Array(repeating: Self.withoutMarkup, count: envelope.recipients.count)
        }
        // Quotas are looked up only for mail with markup: mail without it costs no store read.
        let quotaDomain: String?
        do {
            quotaDomain = try await services.quotaDomain(ofMessage: envelope.message)
        } catch {
            logger.error("cannot look up a sender's quota domain", metadata: ["error": "\(error)"])
            return Array(repeating: Self.storeUnavailable, count: envelope.recipients.count)
        }
        let replies = await withTaskGroup(of: (Int, LMTPReply).self) { group in
            for (index, recipient) in envelope.recipients.enumerated() {
                group.addTask {
                    // `recipient(_:session:)` accepted only owner addresses.
                    guard let owner = OwnerAddress(recipient) else { return (index, Self.storeUnavailable) }
                    return (
                        index,
                        await deliver(envelope.message, to: owner, session: envelope.session, quotaDomain: quotaDomain)
                    )
                }
            }
            var replies = [LMTPReply](repeating: Self.storeUnavailable, count: envelope.recipients.count)
            for await (index, reply) in group { replies[index] = reply }
            return replies
        }
        for reply in replies { services.metrics.recordLMTPReply(code: reply.code) }
        return replies
    }

    private func deliver(
        _ message: [UInt8], to owner: OwnerAddress, session: LMTPSession, quotaDomain: String?
    ) async -> LMTPReply {
        let environment = services.ingestor.environment
        let store = environment.store
        if !services.storeHealth.isAvailable { return Self.storeUnavailable }
        if services.gate.isFull { return Self.busy }
        // Quotas before the spool: a refused delivery leaves nothing behind, and the MTA delivers it again later.
        do {
            if let refusal = try await services.chargeIntake(
                domain: quotaDomain, owners: [owner], bytes: message.count, channel: "lmtp")
            {
                return Self.overQuota(refusal)
            }
        } catch {
            services.storeHealth.record(error)
            logger.error("cannot count a delivery against the quotas", metadata: ["error": "\(error)"])
            return Self.storeUnavailable
        }
        // Durable before any acknowledgement; claimed by this node, due at once for any other node once the claim ends.
        let spooled: SpooledMessage
        do {
            spooled = try await store.spool(
                Data(message), channel: .lmtp, owner: owner, reasonCode: "lmtp.received", nextAttemptAt: environment.now(),
                claimedUnder: services.spoolLease)
        } catch {
            services.storeHealth.record(error)
            logger.error("cannot spool an LMTP message", metadata: ["error": "\(error)", "session": "\(session.id)"])
            return Self.storeUnavailable
        }

        // Decide now; past the deadline the decision goes on and the reply says "queued".
        let services = self.services
        let source = "lmtp:\(spooled.id)"
        services.spoolClaims.insert(spooled.id)
        let decision = Task {
            defer { services.spoolClaims.remove(spooled.id) }
            return try await services.ingest(channel: "lmtp") {
                try await services.ingestor.ingestEmail(
                    message, source: source, owners: [owner], channel: .lmtp, spoolID: spooled.id, prefiltered: true)
            }
        }
        let deadline = Duration.milliseconds(Int64(services.configuration.lmtpReplyDeadlineSeconds * 1000))
        let outcome = await Self.first(decision, within: deadline)
        switch outcome {
        case nil:
            return LMTPReply(code: 250, enhancedCode: "2.0.0", text: "queued as spool #\(spooled.id); the decision is pending")
        case .failure(let error as APIError) where error.storeCode == .spoolEntryGone:
            // Another node's spool worker decided it (this node's claim had run out): stored once, by that node.
            return LMTPReply(code: 250, enhancedCode: "2.0.0", text: "delivered; decided by another node as spool #\(spooled.id)")
        case .failure(let error):
            logger.error("an LMTP ingestion failed", metadata: ["error": "\(error)", "spool": "\(spooled.id)"])
            // Still spooled: once this node's claim ends, a spool worker (this node's or another's) decides it.
            return LMTPReply(code: 250, enhancedCode: "2.0.0", text: "queued as spool #\(spooled.id); the store did not answer yet")
        case .success(nil):
            _ = try? await store.removeSpooledMessage(id: spooled.id)
            return Self.busy
        case .success(let report?):
            await services.countWritten(report, domain: quotaDomain)
            return await reply(for: report, spoolID: spooled.id)
        }
    }

    private func reply(for report: IngestionReport, spoolID: Int64) async -> LMTPReply {
        let log = report.logID.map { "; log #\($0)" } ?? ""
        let codes = Self.refusalCodes(report).prefix(5).joined(separator: ", ")
        switch report.verdict {
        case .admitted, .partial:
            var counts: [String: Int] = [:]
            for item in report.items where item.codes.isEmpty || item.isSuperseded {
                counts[item.isSuperseded ? "superseded" : item.outcome, default: 0] += 1
            }
            let summary = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            let refused = report.verdict == .partial ? "; some refused: \(codes)" : ""
            return LMTPReply(code: 250, enhancedCode: "2.0.0", text: "admitted: \(summary)\(refused)\(log)")
        case .rejected:
            if services.configuration.lmtpRefuseRejected {
                let enhanced = report.codes.contains { $0.hasPrefix("dkim.") } ? "5.7.20" : "5.7.1"
                return LMTPReply(code: 550, enhancedCode: enhanced, text: "refused: \(codes)\(log)")
            }
            return LMTPReply(code: 250, enhancedCode: "2.0.0", text: "delivered; no reservation admitted: \(codes)\(log)")
        case .deferred:
            // The MTA keeps the message and retries; the gateway keeps no copy of its own.
            _ = try? await services.ingestor.environment.store.removeSpooledMessage(id: spoolID)
            return LMTPReply(
                code: 451, enhancedCode: "4.4.3", text: "DKIM key lookup failed for now (\(codes)); try again later")
        }
    }

    /// The codes that say why reservations were refused: the message's own, then each refused item's (an item that
    /// failed a check of its own, such as `markup.arrival-before-departure`, leaves the message's codes empty), each
    /// once, without property paths (a reply line is short).
    static func refusalCodes(_ report: IngestionReport) -> [String] {
        var seen = Set<String>()
        return (report.codes + report.items.filter { !$0.isSuperseded }.flatMap(\.codes)).map(GatewayMetrics.stableCode).filter { seen.insert($0).inserted }
    }

    /// The task's result, or nil once `deadline` passes (the task keeps running). Awaiting a task's result cannot be
    /// cancelled, so the race is two tasks resuming one continuation, the first one winning.
    static func first<T: Sendable>(_ task: Task<T, any Error>, within deadline: Duration) async -> Result<T, any Error>? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>?, Never>) in
            let pending = Mutex<CheckedContinuation<Result<T, any Error>?, Never>?>(continuation)
            let resume: @Sendable (Result<T, any Error>?) -> Void = { value in
                pending.withLock { $0.take() }?.resume(returning: value)
            }
            let timer = Task {
                try await Task.sleep(for: deadline)
                resume(nil)
            }
            Task {
                let result = await task.result
                timer.cancel()
                resume(result)
            }
        }
    }

    /// The reply to mail the prefilter found no markup in.
    static let withoutMarkup = LMTPReply(code: 250, enhancedCode: "2.0.0", text: "delivered; no markup")

    /// A quota used up: the MTA keeps the message and delivers it again later.
    static func overQuota(_ refusal: QuotaRefusal) -> LMTPReply {
        LMTPReply(code: 452, enhancedCode: "4.2.1", text: "\(refusal.code): \(refusal.reason)")
    }

    static let busy = LMTPReply(code: 452, enhancedCode: "4.3.1", text: "the gateway is busy; try again later")
    static let storeUnavailable = LMTPReply(
        code: 451, enhancedCode: "4.3.0", text: "the gateway cannot store the message now; try again later")
}
