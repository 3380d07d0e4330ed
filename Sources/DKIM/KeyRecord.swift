/// A DKIM key record published at `selector._domainkey.domain` (RFC 6376 §3.6.1, RFC 8463 §4).
package struct KeyRecord: Sendable {
    /// `k=`.
    package enum KeyType: String, Sendable, Hashable {
        case rsa
        case ed25519
    }

    package var keyType: KeyType
    /// `p=`, base64-decoded: a SubjectPublicKeyInfo (or bare RSAPublicKey) for RSA, 32 raw bytes for Ed25519.
    /// Empty when the key was revoked.
    package var publicKeyData: [UInt8]
    /// `h=`: acceptable hash algorithms; nil means any.
    package var acceptableHashes: [String]?
    /// `s=`: service types; nil means `*`.
    package var serviceTypes: [String]?
    /// `t=y`: the domain is testing DKIM.
    package var isTesting: Bool
    /// `t=s`: `i=` must use exactly `d=`, not a subdomain.
    package var isStrict: Bool

    package var isRevoked: Bool { publicKeyData.isEmpty }

    /// Parses a key record's text (its TXT strings already joined).
    /// - Throws: `.keyMalformed` for syntax errors, bad base64 or an unknown `k=`;
    ///   `.unsupportedVersion`-like problems are reported as `.keyMalformed` with the reason.
    package init(parsing text: [UInt8], name: String) throws(DKIMError) {
        let tags: TagList
        do {
            tags = try TagList(parsing: text, what: "key record \(name)")
        } catch {
            throw DKIMError(code: .keyMalformed, reason: error.reason)
        }
        // v= is optional, but if present it must be the first tag and equal DKIM1 (RFC 6376 §3.6.1).
        if let version = tags["v"] {
            guard tags.tags.first?.name == "v", version == "DKIM1" else {
                throw DKIMError(code: .keyMalformed, reason: "key record \(name) has v=\(version) or v= not first; it must start with v=DKIM1")
            }
        }
        let k = tags["k"]?.lowercased() ?? "rsa"
        guard let keyType = KeyType(rawValue: k) else {
            throw DKIMError(code: .keyMalformed, reason: "key record \(name) has k=\(k); supported key types are rsa and ed25519")
        }
        guard let p = tags["p"] else {
            throw DKIMError(code: .keyMalformed, reason: "key record \(name) has no p= tag; publish the public key in p=")
        }
        let compact = p.removingFoldingWhitespace
        if compact.isEmpty {
            publicKeyData = []
        } else {
            guard let decoded = decodeBase64(compact) else {
                throw DKIMError(code: .keyMalformed, reason: "key record \(name) p= is not valid base64")
            }
            publicKeyData = decoded
        }
        self.keyType = keyType
        acceptableHashes = tags["h"].map { $0.split(separator: ":").map { $0.removingFoldingWhitespace.lowercased() } }
        serviceTypes = tags["s"].map { $0.split(separator: ":").map { $0.removingFoldingWhitespace.lowercased() } }
        let flags = tags["t"].map { $0.split(separator: ":").map { $0.removingFoldingWhitespace.lowercased() } } ?? []
        isTesting = flags.contains("y")
        isStrict = flags.contains("s")
    }
}
