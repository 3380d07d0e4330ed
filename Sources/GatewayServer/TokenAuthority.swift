import Admission
import DKIM
package import Foundation
package import Store

/// Issues and checks the server's bearer tokens (RFC 6750). A secret is 32 random bytes from the system's
/// cryptographic generator (getrandom), base64url, behind a prefix that tells people its role (`gwa_` admin,
/// `gws_` sender, `gwo_` owner); only its SHA-256 is stored, so a copy of the database reveals no usable token.
/// Secrets have 256 bits of entropy, so a fast hash suffices: there is nothing to brute-force.
package struct TokenAuthority: Sendable {
    /// The tokens and the registry (through the server's read cache, when it has one).
    package let store: any TokenStore & DomainRegistryStore
    /// How long a console session lasts at most (``startSession(signingInWith:)``).
    package var sessionLifetime: TimeInterval

    package init(store: any TokenStore & DomainRegistryStore, sessionLifetime: TimeInterval = 12 * 3600) {
        self.store = store
        self.sessionLifetime = sessionLifetime
    }

    /// The normalized subject a token of `role` speaks for: nothing for admin, an address for an owner, a
    /// registered domain (IDNA, lower case) for a sender.
    /// - Throws: ``TokenError`` `auth.invalid-subject`, or `registry.domain-not-registered`.
    package func subject(for role: AccessToken.Role, _ subject: String) async throws -> String {
        switch role {
        case .admin:
            guard subject.isEmpty else { throw TokenError(code: "auth.invalid-subject", reason: "an admin token has no subject") }
            return ""
        case .owner:
            guard let owner = OwnerAddress(subject) else {
                throw TokenError(code: "auth.invalid-subject", reason: "'\(subject.prefix(80))' is not an email address")
            }
            return owner.address
        case .sender:
            let domain: DomainName
            do {
                domain = try DomainName(normalizing: subject)
            } catch {
                throw TokenError(code: "auth.invalid-subject", reason: error.description)
            }
            guard try await store.registeredDomain(domain.ascii) != nil else {
                throw TokenError(
                    code: AdmissionError.Code.domainNotRegistered.description,
                    reason: "\(domain.ascii) is not registered; register it first")
            }
            return domain.ascii
        case .app:
            guard DomainRegistry.isAppIdentifier(subject), try await store.registration(ofApp: subject) != nil else {
                throw TokenError(
                    code: "app.not-registered",
                    reason: "\(subject.prefix(100)) is not a registered app; run gateway apps register \(subject.prefix(100)) --domain D first")
            }
            return subject
        }
    }

    /// A new token for `role` and `subject`. - Returns: the stored record and the secret, shown once.
    package func issue(
        role: AccessToken.Role, subject: String, label: String, by actor: String
    ) async throws -> (token: AccessToken, secret: String) {
        let secret = Self.makeSecret(role: role)
        let token = try await store.addToken(
            role: role, subject: subject, label: label, secretHash: Self.hash(secret), by: actor)
        return (token, secret)
    }

    /// The token a presented secret stands for, or nil (unknown, revoked, not shaped like one of ours, or a console
    /// session's, which only its cookie carries).
    package func authenticate(_ secret: String) async throws -> AccessToken? {
        guard secret.utf8.count >= 20, secret.utf8.count <= 200 else { return nil }
        guard let token = try await store.token(secretHash: Self.hash(secret)), token.consoleSessionParent == nil
        else { return nil }
        return token
    }

    /// Makes sure an admin can get in at first start.
    ///
    /// - `preset` (from `GATEWAY_ADMIN_TOKEN`): stored as an admin token unless it already is.
    /// - Otherwise, when no unrevoked admin token exists, a new one is generated.
    /// - Returns: the secret of a newly generated token, for the caller to show once; nil when none was made.
    package func bootstrapAdmin(preset: String?, by actor: String) async throws -> String? {
        if let preset, !preset.isEmpty {
            guard preset.utf8.count >= 20, preset.utf8.count <= 200 else {
                throw TokenError(
                    code: "auth.invalid-token", reason: "GATEWAY_ADMIN_TOKEN must be 20 to 200 characters; use a long random string")
            }
            if try await store.token(secretHash: Self.hash(preset)) == nil {
                _ = try await store.addToken(
                    role: .admin, subject: "", label: "GATEWAY_ADMIN_TOKEN", secretHash: Self.hash(preset), by: actor)
            }
            return nil
        }
        if try await store.tokens(role: .admin).contains(where: { $0.revokedAt == nil && $0.consoleSessionParent == nil }) {
            return nil
        }
        return try await issue(role: .admin, subject: "", label: "first start", by: actor).secret
    }

    /// The lower-case hex SHA-256 the store keeps.
    package static func hash(_ secret: String) -> String {
        ContentHash.sha256Hex(Array(secret.utf8))
    }

    static func makeSecret(role: AccessToken.Role) -> String {
        let bytes = randomBytes(32)
        let prefix: String =
            switch role {
            case .admin: "gwa_"
            case .sender: "gws_"
            case .owner: "gwo_"
            case .app: "gwp_"
            }
        return prefix + base64URL(bytes)
    }

    /// RFC 4648 §5 (the URL-safe alphabet), without padding: Foundation's base64 with two letters swapped.
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// A token request that cannot be met: a stable code and what to do.
package struct TokenError: Error, Sendable, CustomStringConvertible {
    package var code: String
    package var reason: String
    package var description: String { "\(code): \(reason)" }
}
