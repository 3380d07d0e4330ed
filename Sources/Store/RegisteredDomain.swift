package import Foundation

/// A domain in the registry of trusted senders and sites (DESIGN.md: only registered domains are admitted).
///
/// The admission stage owns what the statuses mean; the store only keeps them.
package struct RegisteredDomain: Codable, Hashable, Sendable {
    package enum Status: String, Codable, Hashable, Sendable, CaseIterable {
        /// Asked for, not yet approved: not trusted.
        case pending
        /// Trusted.
        case approved
        /// Was trusted, no longer is.
        case revoked
    }

    /// Lowercase, without a trailing dot.
    package var domain: String
    package var status: Status
    /// Who to reach about this sender (free text, for operators).
    package var contact: String?
    package var createdAt: Date
    package var updatedAt: Date
    /// Who made the latest change.
    package var updatedBy: String

    package init(
        domain: String, status: Status, contact: String?, createdAt: Date, updatedAt: Date, updatedBy: String
    ) {
        self.domain = domain
        self.status = status
        self.contact = contact
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
    }
}
