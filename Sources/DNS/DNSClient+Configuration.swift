extension DNSClient {
    /// Where and how to ask. The defaults follow glibc's resolver, plus EDNS0.
    package struct Configuration: Sendable, Hashable {
        /// Recursive nameservers, tried in order. An empty list makes every lookup fail with `.network`.
        package var nameservers: [NameserverAddress]
        /// How long one try waits for an answer (resolv.conf(5) `timeout`, default 2 s). At least 1 ms.
        package var timeout: Duration
        /// Rounds over the nameserver list (resolv.conf(5) `attempts`, default 2). At least 1.
        package var attempts: Int
        /// The UDP payload size advertised with EDNS0 (RFC 6891 §6.2.5), or nil to send plain queries.
        /// Default 1232 bytes, which fits an IPv6 minimum-MTU packet unfragmented (DNS Flag Day 2020).
        package var ednsPayloadSize: UInt16?

        package init(
            nameservers: [NameserverAddress] = [.localhost],
            timeout: Duration = .seconds(2),
            attempts: Int = 2,
            ednsPayloadSize: UInt16? = 1232
        ) {
            self.nameservers = nameservers
            self.timeout = timeout
            self.attempts = attempts
            self.ednsPayloadSize = ednsPayloadSize
        }
    }
}
