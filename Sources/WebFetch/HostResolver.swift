/// Turns a host name into the addresses to connect to. The fetcher resolves once per hop,
/// checks every answer against its ``AddressPolicy`` and connects to exactly those addresses,
/// so an answer that changes between the check and the connection (DNS rebinding) is never
/// used: there is no second lookup.
package protocol HostResolver: Sendable {
    /// The addresses `host` resolves to, in the order to try them.
    /// - Parameters:
    ///   - host: a DNS name in ASCII form, lowercased, without a trailing dot.
    ///   - timeout: how long the lookup may take.
    /// - Throws: `web.dns-failed` when the name does not resolve, `web.timeout` when it takes too long.
    func addresses(of host: String, timeout: Duration) async throws(FetchError) -> [IPAddress]
}
