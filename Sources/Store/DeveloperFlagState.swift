package import Foundation

/// The stored state of one developer flag (`allow-any-domain`, `allow-unverified-sources`).
///
/// The store keeps ``expiresAt``; whether a flag is in force at a given instant is the caller's decision.
package struct DeveloperFlagState: Codable, Hashable, Sendable {
    package var name: String
    package var enabled: Bool
    package var expiresAt: Date?
    package var setBy: String
    package var setAt: Date

    package init(name: String, enabled: Bool, expiresAt: Date?, setBy: String, setAt: Date) {
        self.name = name
        self.enabled = enabled
        self.expiresAt = expiresAt
        self.setBy = setBy
        self.setAt = setAt
    }
}
