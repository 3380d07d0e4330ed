package import Foundation

/// Secrets every node of a cluster must share, kept in the store itself: the first node that asks for one makes it,
/// and every node reads the same value afterwards. Used for the key that reduces owner addresses to pseudonyms in what
/// a sender reads of the decision log (``OwnerPseudonym``).
///
/// Whoever can read the store can read these secrets; they guard only what leaves through the API. A secret is not
/// copied by `gateway store copy` (the target makes its own: pseudonyms change once).
package protocol SecretStore: Sendable {
    /// The secret `name`; when there is none yet, `make()`'s value is stored (unless another node stored one first)
    /// and the stored one returned.
    func secret(_ name: String, orMake make: @escaping @Sendable () -> Data) async throws -> Data
}
