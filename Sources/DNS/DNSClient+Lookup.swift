extension DNSClient {
    /// One lookup's blocking work: the retry loop over nameservers and transports.
    struct Lookup: Sendable {
        let configuration: Configuration
        let name: DomainName
        let cancellation: CancellationFlag

        /// Runs the lookup to its end; call only on a thread that may block.
        func run() -> Result<[TXTRecord], DNSError> { answer().result }

        /// Runs the lookup to its end, saying whose answer it is; call only on a thread that may block.
        func answer() -> (result: Result<[TXTRecord], DNSError>, server: NameserverAddress?) {
            let servers = configuration.nameservers
            guard !servers.isEmpty else {
                return (
                    .failure(DNSError(code: .network, reason: "no nameserver is configured; give one with --nameserver")),
                    nil
                )
            }
            let timeout = max(configuration.timeout, .milliseconds(1))
            var answeredBadly = Array(repeating: false, count: servers.count)
            var serverError: (DNSError, NameserverAddress)? = nil
            var transportError: DNSError? = nil
            for _ in 0..<max(configuration.attempts, 1) {
                for (index, server) in servers.enumerated() where !answeredBadly[index] {
                    do throws(DNSError) {
                        return (.success(try ask(server, timeout: timeout)), server)
                    } catch {
                        switch error.code {
                        case .nameNotFound, .noData:
                            return (.failure(error), server)
                        case .cancelled:
                            return (.failure(error), nil)
                        case .timeout, .network:
                            transportError = error
                        default:
                            // SERVFAIL, REFUSED, unreadable: this server has spoken; ask the others.
                            serverError = serverError ?? (error, server)
                            answeredBadly[index] = true
                        }
                    }
                }
                if !answeredBadly.contains(false) { break }
            }
            if let serverError { return (.failure(serverError.0), serverError.1) }
            return (
                .failure(transportError ?? DNSError(code: .timeout, reason: "no nameserver answered for \(name)")), nil
            )
        }

        /// One try with one server: UDP, then TCP if truncated, then once more without EDNS on FORMERR.
        private func ask(_ server: NameserverAddress, timeout: Duration) throws(DNSError) -> [TXTRecord] {
            let transport = DNSTransport(server: server, cancellation: cancellation)
            var query = DNSQuery(name: name, ednsPayloadSize: configuration.ednsPayloadSize)
            var response = try transport.exchangeOverUDP(query, timeout: timeout)
            if response.isTruncated {
                query = query.withNewID()
                response = try transport.exchangeOverTCP(query, timeout: timeout)
            }
            // RFC 6891 §7: a server that does not know EDNS may answer FORMERR; ask again without the OPT record.
            if query.ednsPayloadSize != nil, !response.hasEDNS,
                response.responseCode == DNSWire.ResponseCode.formatError
            {
                query = query.withoutEDNS()
                response = try transport.exchangeOverUDP(query, timeout: timeout)
                if response.isTruncated {
                    query = query.withNewID()
                    response = try transport.exchangeOverTCP(query, timeout: timeout)
                }
            }
            return try response.txtRecords(for: name, from: server)
        }
    }
}
