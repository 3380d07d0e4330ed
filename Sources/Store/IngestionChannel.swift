/// How a message or page reached the gateway.
package enum IngestionChannel: String, Codable, Hashable, Sendable, CaseIterable {
    /// An email file handed to the command line.
    case email
    /// A page the gateway fetched over HTTPS.
    case web
    /// A submission to the HTTP API.
    case http
    /// An email delivered by the LMTP listener (RFC 2033).
    case lmtp
    /// A donation from a booking app, made with its app token (issue 17).
    case app
}
