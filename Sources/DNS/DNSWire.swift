/// Numbers from the DNS wire format that the client uses (RFC 1035 §3.2, §4.1; RFC 6891 §6.1).
enum DNSWire {
    /// RFC 1035 §4.1.1: the fixed header is 12 bytes.
    static let headerLength = 12
    /// RFC 1035 §4.2.1: a UDP message without EDNS is at most 512 bytes; TCP frames carry at most 65535.
    static let maximumMessageLength = 65535

    enum RecordType {
        static let cname: UInt16 = 5
        static let txt: UInt16 = 16
        static let opt: UInt16 = 41
    }

    enum RecordClass {
        static let internet: UInt16 = 1
    }

    /// RCODE values (RFC 1035 §4.1.1; RFC 6891 §9 for the extended ones).
    enum ResponseCode {
        static let noError: UInt16 = 0
        static let formatError: UInt16 = 1
        static let serverFailure: UInt16 = 2
        static let nameError: UInt16 = 3
        static let notImplemented: UInt16 = 4
        static let refused: UInt16 = 5
        static let badVersion: UInt16 = 16
    }

    /// Header flag bits in the second 16-bit word (RFC 1035 §4.1.1).
    enum Flag {
        static let response: UInt16 = 0x8000
        static let opcodeMask: UInt16 = 0x7800
        static let truncated: UInt16 = 0x0200
        static let recursionDesired: UInt16 = 0x0100
        static let responseCodeMask: UInt16 = 0x000F
    }

    /// Longest CNAME chain the client follows inside one answer; longer means a loop or a broken zone.
    static let maximumCNAMEChain = 16
    /// Most compression pointers followed while reading one name: a bound that stops pointer loops
    /// (RFC 1035 §4.1.4 does not forbid forward pointers, so a loop is cut by counting).
    static let maximumPointerJumps = 64
}
