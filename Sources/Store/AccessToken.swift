package import Foundation

/// A bearer token the server accepts, as stored: only the SHA-256 of its secret is kept, never the secret.
///
/// What a role may do is the server's decision; the store keeps who the token speaks for.
package struct AccessToken: Codable, Hashable, Sendable {
    package enum Role: String, Codable, Hashable, Sendable, CaseIterable {
        /// Domain management, flags, tokens, every owner's data.
        case admin
        /// Submissions and checks for one registered domain (``AccessToken/subject``) and its subdomains.
        case sender
        /// Reading one owner's (``AccessToken/subject``, an address) reservations and calendar feed.
        case owner
        /// Donations from one app (``AccessToken/subject``, its identifier), bound to a registered domain.
        case app
    }

    package var id: Int64
    package var role: Role
    /// The registered domain of a sender token, the address of an owner token, the app identifier of an app token, empty
    /// for an admin token.
    package var subject: String
    /// Free text for people: what the token is for ("postfix on mx1", "first start").
    package var label: String
    package var createdAt: Date
    /// Who issued it.
    package var createdBy: String
    package var revokedAt: Date?

    package init(
        id: Int64, role: Role, subject: String, label: String, createdAt: Date, createdBy: String, revokedAt: Date?
    ) {
        self.id = id
        self.role = role
        self.subject = subject
        self.label = label
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.revokedAt = revokedAt
    }
}
