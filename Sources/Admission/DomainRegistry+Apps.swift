package import Store

/// Apps bound to registered domains (issue 17): a donation made with an app's token is admitted as its domain's.
extension DomainRegistry {
    /// Binds the app `identifier` (a reverse-DNS bundle identifier such as `com.airline.app`) to the registered domain
    /// `input`. An app is bound to one domain: binding it again to the same domain changes nothing, to another is refused.
    /// - Throws: `app.identifier-invalid`, `app.bound-elsewhere`, `registry.domain-not-registered`.
    package func registerApp(_ identifier: String, domain input: String, by actor: String) async throws
        -> RegisteredDomain
    {
        guard Self.isAppIdentifier(identifier) else {
            throw AdmissionError(
                code: .appIdentifierInvalid,
                reason:
                    "'\(identifier.prefix(100))' is no app identifier: use the app's bundle identifier (com.airline.app)"
            )
        }
        let name = try DomainName(normalizing: input).ascii
        if let bound = try await app(identifier), bound.domain != name {
            throw AdmissionError(
                code: .appBoundElsewhere,
                reason: "\(identifier) is bound to \(bound.domain); an app donates for one domain")
        }
        guard
            let stored = try await store.updateDomain(
                name, by: actor,
                { current, _ in
                    guard var entry = current else { throw DomainLifecycle.notRegistered(name) }
                    guard !entry.trust.apps.contains(identifier) else { return nil }
                    entry.trust.apps = (entry.trust.apps + [identifier]).sorted()
                    return DomainUpdate(registration: entry, recordsChange: true, reason: "app \(identifier) bound")
                })
        else {
            throw DomainLifecycle.notRegistered(name)
        }
        return stored
    }

    /// The registration the app `identifier` is bound to; nil when none.
    package func app(_ identifier: String) async throws -> RegisteredDomain? {
        try await store.registration(ofApp: identifier)
    }

    /// A bundle identifier: 3 to 155 characters of letters, digits, `.`, `-` and `_`, with at least one dot.
    package static func isAppIdentifier(_ text: String) -> Bool {
        (3...155).contains(text.utf8.count) && text.contains(".") && !text.hasPrefix(".") && !text.hasSuffix(".")
            && text.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2E || byte == 0x2D || byte == 0x5F
            }
    }
}
