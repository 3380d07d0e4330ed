package import Foundation

/// One change of a developer flag, kept forever in the flag history.
package struct FlagChange: Codable, Hashable, Sendable, Identifiable {
    /// Increasing in the order changes were made.
    package var id: Int64
    package var name: String
    package var enabled: Bool
    package var expiresAt: Date?
    package var setBy: String
    package var setAt: Date

    package init(id: Int64, name: String, enabled: Bool, expiresAt: Date?, setBy: String, setAt: Date) {
        self.id = id
        self.name = name
        self.enabled = enabled
        self.expiresAt = expiresAt
        self.setBy = setBy
        self.setAt = setAt
    }
}
