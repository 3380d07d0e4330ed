package import Foundation

/// One change of the domain registry, kept forever: who approved, verified, suspended or revoked a domain, when and
/// why.
package struct DomainChange: Codable, Hashable, Sendable, Identifiable {
    /// Increasing in the order changes were made.
    package var id: Int64
    package var domain: String
    package var status: RegisteredDomain.Status
    package var contact: String?
    package var changedAt: Date
    package var changedBy: String
    /// Why, where the change has a reason worth keeping (a suspension, a proof found, test mode turned on).
    package var reason: String?

    package init(
        id: Int64, domain: String, status: RegisteredDomain.Status, contact: String?, changedAt: Date,
        changedBy: String, reason: String? = nil
    ) {
        self.id = id
        self.domain = domain
        self.status = status
        self.contact = contact
        self.changedAt = changedAt
        self.changedBy = changedBy
        self.reason = reason
    }
}
