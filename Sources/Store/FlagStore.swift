package import Foundation

/// Keeps the developer flags and every change made to them. Whether a flag is in force (enabled and not expired,
/// allowed by the policy) is decided by the admission stage.
package protocol FlagStore: Sendable {
    /// The stored state of flag `name`, or nil if it was never set.
    func flag(_ name: String) async throws -> DeveloperFlagState?

    /// Every flag ever set, ordered by name.
    func flags() async throws -> [DeveloperFlagState]

    /// Sets flag `name`, stamped with the store's clock, and records the change in the history.
    /// - Returns: The new state.
    func setFlag(_ name: String, enabled: Bool, expiresAt: Date?, by actor: String) async throws -> DeveloperFlagState

    /// The latest `limit` changes (of flag `name` when given), oldest first.
    func flagChanges(name: String?, limit: Int) async throws -> [FlagChange]
}
