/// Looks up TXT records: what DKIM needs of DNS (RFC 6376 §3.6.2.2).
///
/// Implementations: `DNSClient` (UDP with TCP fallback to real nameservers), `CachingResolver`
/// (a TTL-respecting cache in front of another resolver) and `ZoneFileResolver` (a static key file).
package protocol TXTResolver: Sendable {
    /// The TXT records published at `name`.
    ///
    /// - Parameter name: a fully qualified domain name, with or without the trailing dot.
    /// - Returns: one `TXTRecord` per resource record, never empty.
    /// - Throws: `DNSError`: `.nameNotFound` (NXDOMAIN) and `.noData` are definitive answers;
    ///   `.serverFailure`, `.refused`, `.timeout`, `.network` and `.malformedResponse` may succeed later
    ///   (`isTemporary`).
    func txtRecords(for name: String) async throws(DNSError) -> [TXTRecord]

    /// Asks for the TXT records at `name` past any cache, saying who answered: for a proof of domain control, which
    /// must see the zone as it is now and record where the answer came from.
    func freshTXTAnswer(for name: String) async -> TXTAnswer
}

extension TXTResolver {
    /// ``txtRecords(for:)``, not saying who answered (a resolver that cannot tell).
    package func freshTXTAnswer(for name: String) async -> TXTAnswer {
        do {
            return TXTAnswer(result: .success(try await txtRecords(for: name)), answeredBy: nil)
        } catch {
            return TXTAnswer(result: .failure(error), answeredBy: nil)
        }
    }
}

/// The answer to one TXT lookup and who gave it.
package struct TXTAnswer: Sendable {
    /// The records, or why there are none (a definitive NXDOMAIN or NODATA, or a failure for now).
    package var result: Result<[TXTRecord], DNSError>
    /// The nameserver whose answer this is (`127.0.0.1:53`), the zone file (`zone file keys.zone`); nil when no
    /// nameserver answered at all, or the resolver cannot tell.
    package var answeredBy: String?

    package init(result: Result<[TXTRecord], DNSError>, answeredBy: String?) {
        self.result = result
        self.answeredBy = answeredBy
    }
}

/// One TXT resource record: its character-strings (each at most 255 bytes on the wire).
package struct TXTRecord: Sendable, Hashable {
    package var strings: [[UInt8]]
    /// Seconds the answer may be cached.
    package var ttl: UInt32

    package init(strings: [[UInt8]], ttl: UInt32 = 0) {
        self.strings = strings
        self.ttl = ttl
    }

    /// The character-strings concatenated with nothing between them, as DKIM reads a key record
    /// split over several strings (RFC 6376 §3.6.2.2).
    package var joined: [UInt8] { strings.flatMap { $0 } }
    package var text: String { String(decoding: joined, as: UTF8.self) }
}
