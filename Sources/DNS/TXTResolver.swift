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
