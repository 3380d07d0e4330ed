/// A TXT question as sent on the wire (RFC 1035 §4.1), optionally with an EDNS0 OPT record (RFC 6891 §6).
struct DNSQuery: Sendable {
    /// Random per query: with the random source port of a fresh socket it is what an off-path
    /// spoofer has to guess (RFC 5452 §4).
    let id: UInt16
    let name: DomainName
    /// The UDP payload size advertised in the OPT record, or nil to send no OPT record.
    let ednsPayloadSize: UInt16?

    init(id: UInt16 = UInt16.random(in: 0...UInt16.max), name: DomainName, ednsPayloadSize: UInt16?) {
        self.id = id
        self.name = name
        self.ednsPayloadSize = ednsPayloadSize
    }

    /// The same question under a new ID (each transmission gets its own, RFC 5452 §9.2).
    func withNewID() -> DNSQuery {
        DNSQuery(name: name, ednsPayloadSize: ednsPayloadSize)
    }

    /// The same question without the OPT record, for servers that answer EDNS with FORMERR (RFC 6891 §7).
    func withoutEDNS() -> DNSQuery {
        DNSQuery(name: name, ednsPayloadSize: nil)
    }

    var bytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(DNSWire.headerLength + name.wire.count + 4 + 11)
        let additionalCount: UInt16 = ednsPayloadSize == nil ? 0 : 1
        for word in [id, DNSWire.Flag.recursionDesired, 1, 0, 0, additionalCount] {
            bytes.append(UInt8(word >> 8))
            bytes.append(UInt8(word & 0xFF))
        }
        bytes.append(contentsOf: name.wire)
        bytes.append(contentsOf: [0, UInt8(DNSWire.RecordType.txt), 0, UInt8(DNSWire.RecordClass.internet)])
        if let ednsPayloadSize {
            // OPT pseudo-record: root owner, TYPE 41, CLASS = payload size, TTL = extended RCODE 0,
            // version 0, no flags (DO unset: we do not validate DNSSEC), no options.
            bytes.append(0)
            bytes.append(contentsOf: [0, UInt8(DNSWire.RecordType.opt)])
            bytes.append(contentsOf: [UInt8(ednsPayloadSize >> 8), UInt8(ednsPayloadSize & 0xFF)])
            bytes.append(contentsOf: [0, 0, 0, 0, 0, 0])
        }
        return bytes
    }
}
