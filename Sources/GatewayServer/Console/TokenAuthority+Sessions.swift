package import Foundation
package import Store

/// A signed-in console: the session's own token record and the token that signed in, whose role and subject the
/// session acts with.
package struct ConsoleSession: Sendable {
    /// The session's record in the token store (`console session`, created by `console-session:token-<id>`).
    package var record: AccessToken
    /// The token that signed in: what the session may see is what this token sees through the API.
    package var token: AccessToken
    package var expiresAt: Date
    /// The form token every console form carries (bound to this session's secret).
    package var formToken: String
}

extension AccessToken {
    /// Who started a console session, as its record's `createdBy` says it: `console-session:token-<id>`.
    static let consoleSessionActorPrefix = "console-session:token-"

    /// The id of the token that signed in, when this record is a console session; nil for a token people hold.
    var consoleSessionParent: Int64? {
        guard createdBy.hasPrefix(Self.consoleSessionActorPrefix) else { return nil }
        return Int64(createdBy.dropFirst(Self.consoleSessionActorPrefix.count))
    }
}

/// Console sessions are short-lived tokens derived from the token that signed in, kept in the same token store (no
/// table of their own, nothing in one node's memory: any node sharing the database checks them). A session's record
/// has the signing token's role and subject, the label `console session`, and `console-session:token-<id>` as its creator;
/// only the SHA-256 of its secret is stored. It is never accepted as a bearer token, and it ends at sign-out (revoked),
/// when it is older than the configured lifetime, or as soon as the token that signed in is revoked.
extension TokenAuthority {
    /// Starts a session for the holder of `secret`. - Returns: nil when the secret is no valid token (unknown,
    /// revoked, itself a session's, or an app's: an app donates, it has no pages).
    package func startSession(signingInWith secret: String) async throws -> (session: ConsoleSession, secret: String)? {
        guard let token = try await authenticate(secret), token.role != .app else { return nil }
        let sessionSecret = "gwc_" + Self.base64URL(Self.randomBytes(32))
        let record = try await store.addToken(
            role: token.role, subject: token.subject, label: "console session", secretHash: Self.hash(sessionSecret),
            by: AccessToken.consoleSessionActorPrefix + String(token.id))
        let session = ConsoleSession(
            record: record, token: token, expiresAt: record.createdAt.addingTimeInterval(sessionLifetime),
            formToken: Self.formToken(forSession: sessionSecret))
        return (session, sessionSecret)
    }

    /// The live session a cookie's secret stands for, or nil: unknown, ended, expired, or its token revoked.
    package func session(_ secret: String, now: Date) async throws -> ConsoleSession? {
        guard secret.hasPrefix("gwc_"), secret.utf8.count <= 200 else { return nil }
        guard let record = try await store.token(secretHash: Self.hash(secret)), let parentID = record.consoleSessionParent
        else { return nil }
        let expiresAt = record.createdAt.addingTimeInterval(sessionLifetime)
        guard now < expiresAt else {
            _ = try await store.revokeToken(id: record.id)  // tidy: an expired session never matches again
            return nil
        }
        guard let token = try await store.token(id: parentID), token.revokedAt == nil else { return nil }
        return ConsoleSession(
            record: record, token: token, expiresAt: expiresAt, formToken: Self.formToken(forSession: secret))
    }

    /// Ends a session (sign-out).
    package func endSession(_ session: ConsoleSession) async throws {
        _ = try await store.revokeToken(id: session.record.id)
    }

    /// The form token of a session: derived from its secret (which only the cookie carries), so every node computes
    /// the same one and no page without the cookie can know it.
    static func formToken(forSession secret: String) -> String {
        String(hash("gateway console form\u{0}" + secret).prefix(43))
    }

    /// `count` bytes from the system's cryptographic generator (getrandom).
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
