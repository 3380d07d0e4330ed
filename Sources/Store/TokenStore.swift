/// Keeps the server's bearer tokens by the SHA-256 of their secret (the server makes and hashes secrets; the store
/// never sees one). Revoked tokens are kept for the record and never match again.
package protocol TokenStore: Sendable {
    /// Stores a new token.
    /// - Parameter secretHash: The lower-case hex SHA-256 of the secret (64 characters).
    /// - Throws: ``StoreError`` `store.invalid-argument` when the hash is malformed or already stored.
    func addToken(
        role: AccessToken.Role, subject: String, label: String, secretHash: String, by actor: String
    ) async throws -> AccessToken
    /// The unrevoked token whose secret hashes to `secretHash`, or nil.
    func token(secretHash: String) async throws -> AccessToken?
    /// Every token (revoked ones too), or those of one role, oldest first.
    func tokens(role: AccessToken.Role?) async throws -> [AccessToken]
    /// Revokes token `id`. - Returns: false when there is no such unrevoked token.
    func revokeToken(id: Int64) async throws -> Bool
    /// The token `id`, revoked or not, or nil.
    func token(id: Int64) async throws -> AccessToken?
}
