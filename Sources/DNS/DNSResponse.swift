/// A reply to a `DNSQuery`, parsed from the wire (RFC 1035 §4.1).
struct DNSResponse: Sendable {
    /// One resource record of the answer section (RFC 1035 §4.1.3).
    struct Record: Sendable, Hashable {
        var name: DomainName
        var type: UInt16
        var recordClass: UInt16
        /// Seconds; values with the top bit set are read as 0 (RFC 2181 §8).
        var ttl: UInt32
        var data: RecordData
    }

    /// The RDATA forms the client reads; everything else is kept only as its type.
    enum RecordData: Sendable, Hashable {
        /// RFC 1035 §3.3.14: one or more character-strings.
        case txt([[UInt8]])
        /// RFC 1035 §3.3.1: the canonical name.
        case cname(DomainName)
        case other
    }

    var id: UInt16
    /// TC: the answer did not fit; ask again over TCP (RFC 7766 §5).
    var isTruncated: Bool
    /// The RCODE, including the upper bits carried in an OPT record (RFC 6891 §6.1.3).
    var responseCode: UInt16
    var answers: [Record]
    /// Whether the reply carried an OPT record, i.e. the server speaks EDNS.
    var hasEDNS: Bool
}
