extension DNSResponse {
    /// The TXT records this response gives for `name`, following CNAMEs within the answer section.
    ///
    /// - Returns: one `TXTRecord` per TXT resource record at the end of the CNAME chain; each TTL is
    ///   capped by the TTLs of the CNAMEs that led there, since the answer is only as fresh as its chain.
    /// - Throws: the RCODE as a `DNSError` (NXDOMAIN → `.nameNotFound`, SERVFAIL → `.serverFailure`,
    ///   REFUSED → `.refused`, any other → `.malformedResponse`), `.noData` for NOERROR without TXT
    ///   (RFC 2308 §2.2), `.malformedResponse` for a CNAME chain longer than 16 links (a loop).
    func txtRecords(for name: DomainName, from server: NameserverAddress) throws(DNSError) -> [TXTRecord] {
        switch responseCode {
        case DNSWire.ResponseCode.noError:
            break
        case DNSWire.ResponseCode.nameError:
            throw DNSError(code: .nameNotFound, reason: "\(name) does not exist (NXDOMAIN from \(server))")
        case DNSWire.ResponseCode.serverFailure:
            throw DNSError(
                code: .serverFailure, reason: "\(server) answered SERVFAIL for \(name); try again later")
        case DNSWire.ResponseCode.refused:
            throw DNSError(
                code: .refused,
                reason: "\(server) refused to answer for \(name); check that it allows recursion for this host")
        default:
            throw DNSError(
                code: .malformedResponse, reason: "\(server) answered RCODE \(responseCode) for \(name)")
        }

        var current = name
        var chainTTL = UInt32.max
        var links = 0
        while true {
            var records: [TXTRecord] = []
            var canonicalName: DomainName? = nil
            for record in answers where record.name == current {
                switch record.data {
                case .txt(let strings):
                    records.append(TXTRecord(strings: strings, ttl: min(record.ttl, chainTTL)))
                case .cname(let target):
                    if canonicalName == nil {
                        canonicalName = target
                        chainTTL = min(chainTTL, record.ttl)
                    }
                case .other:
                    break
                }
            }
            if !records.isEmpty { return records }
            guard let target = canonicalName else {
                throw DNSError(
                    code: .noData,
                    reason: current == name
                        ? "\(name) exists but has no TXT record (from \(server))"
                        : "\(name) is an alias of \(current), which has no TXT record (from \(server))")
            }
            links += 1
            guard links <= DNSWire.maximumCNAMEChain else {
                throw DNSError(
                    code: .malformedResponse,
                    reason: "the answer for \(name) from \(server) has a CNAME chain of more than "
                        + "\(DNSWire.maximumCNAMEChain) links (a loop?)")
            }
            current = target
        }
    }
}
