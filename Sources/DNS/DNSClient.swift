/// A stub resolver (RFC 1035 §7, RFC 1123 §6.1.3.1): asks recursive nameservers for TXT records over UDP,
/// retrying over TCP when the answer is truncated.
///
/// Each lookup runs its blocking socket I/O on its own thread and suspends the calling task until the
/// answer, the deadline or cancellation; the cooperative thread pool is never blocked.
///
/// ```swift
/// let resolver = DNSClient(configuration: .system())
/// let records = try await resolver.txtRecords(for: "sel._domainkey.example.com")
/// ```
package struct DNSClient: TXTResolver {
    package let configuration: Configuration

    package init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Asks the configured nameservers for the TXT records at `name`.
    ///
    /// Nameservers are tried in order, `attempts` rounds over the list, each try waiting up to
    /// `timeout` (so a lookup takes at most about attempts × nameservers × timeout, plus TCP retries).
    /// A server that answers SERVFAIL, REFUSED or an unreadable message is not asked again in later rounds.
    /// - Throws: `DNSError`; see `TXTResolver`. `.invalidName` before anything is sent, `.cancelled` if the
    ///   task is cancelled, `.timeout` when no server answered.
    package func txtRecords(for name: String) async throws(DNSError) -> [TXTRecord] {
        let domainName = try DomainName(validating: name)
        guard !Task.isCancelled else {
            throw DNSError(code: .cancelled, reason: "the lookup of \(domainName) was cancelled before it began")
        }
        let lookup = Lookup(configuration: configuration, name: domainName, cancellation: CancellationFlag())
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[TXTRecord], DNSError>, Never>) in
                let started = BlockingThread.start { continuation.resume(returning: lookup.run()) }
                if !started {
                    continuation.resume(
                        returning: .failure(
                            DNSError(
                                code: .network,
                                reason: "could not start a thread for the lookup of \(domainName); "
                                    + "the process is out of threads or memory")))
                }
            }
        } onCancel: {
            lookup.cancellation.cancel()
        }
        return try result.get()
    }

    /// Asks the configured nameservers, as ``txtRecords(for:)`` does, and says which one gave the answer.
    package func freshTXTAnswer(for name: String) async -> TXTAnswer {
        let domainName: DomainName
        do {
            domainName = try DomainName(validating: name)
        } catch {
            return TXTAnswer(result: .failure(error), answeredBy: nil)
        }
        guard !Task.isCancelled else {
            return TXTAnswer(
                result: .failure(DNSError(code: .cancelled, reason: "the lookup of \(domainName) was cancelled before it began")),
                answeredBy: nil)
        }
        let lookup = Lookup(configuration: configuration, name: domainName, cancellation: CancellationFlag())
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<TXTAnswer, Never>) in
                let started = BlockingThread.start {
                    let (result, server) = lookup.answer()
                    continuation.resume(returning: TXTAnswer(result: result, answeredBy: server?.description))
                }
                if !started {
                    continuation.resume(
                        returning: TXTAnswer(
                            result: .failure(
                                DNSError(code: .network, reason: "could not start a thread for the lookup of \(domainName)")),
                            answeredBy: nil))
                }
            }
        } onCancel: {
            lookup.cancellation.cancel()
        }
    }
}
