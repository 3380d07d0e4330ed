internal import COpenSSL

/// A public key from a DKIM key record. Owns exactly one `EVP_PKEY`.
final class PublicKey: @unchecked Sendable {
    // Sendable: `key` never changes after init, and OpenSSL allows concurrent verifications
    // with one EVP_PKEY (each uses its own EVP_MD_CTX).
    private let key: OpaquePointer
    let type: KeyRecord.KeyType
    let bits: Int

    /// - Parameter data: the base64-decoded `p=` value: a SubjectPublicKeyInfo (falling back to a
    ///   bare PKCS#1 RSAPublicKey, which some senders publish) for RSA, 32 raw bytes for Ed25519.
    init(type: KeyRecord.KeyType, data: [UInt8], name: String) throws(DKIMError) {
        let parsed: OpaquePointer?
        switch type {
        case .rsa:
            parsed = data.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                if let key = d2i_PUBKEY(nil, &cursor, buffer.count) { return key }
                ERR_clear_error()
                cursor = buffer.baseAddress
                return d2i_PublicKey(EVP_PKEY_RSA, nil, &cursor, buffer.count)
            }
            if let parsed, EVP_PKEY_get_base_id(parsed) != EVP_PKEY_RSA {
                EVP_PKEY_free(parsed)
                throw DKIMError(code: .keyTypeMismatch, reason: "key record \(name) has k=rsa but p= holds another kind of key")
            }
        case .ed25519:
            guard data.count == 32 else {
                throw DKIMError(code: .keyMalformed, reason: "key record \(name) p= holds \(data.count) bytes; an Ed25519 key is 32 raw bytes (RFC 8463 §4)")
            }
            parsed = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, data, data.count)
        }
        guard let parsed else {
            ERR_clear_error()
            throw DKIMError(code: .keyMalformed, reason: "key record \(name) p= is not a valid \(type.rawValue) public key")
        }
        key = parsed
        self.type = type
        bits = Int(EVP_PKEY_get_bits(parsed))
    }

    deinit { EVP_PKEY_free(key) }

    /// Checks `signature` over `data` (RFC 6376 §3.3: RSASSA-PKCS1-v1_5 with SHA-256 over the header
    /// hash input; RFC 8463 §3: PureEdDSA over the SHA-256 digest of that input).
    /// - Returns: false for a signature that does not match (an answer, not a failure).
    func isValidSignature(_ signature: [UInt8], for data: [UInt8]) throws(DKIMError) -> Bool {
        guard let context = EVP_MD_CTX_new() else { throw .openSSL(.openSSLFailure, call: "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        let message: [UInt8]
        switch type {
        case .rsa:
            guard EVP_DigestVerifyInit(context, nil, MessageDigests.shared.sha256, nil, key) == 1 else {
                throw .openSSL(.openSSLFailure, call: "EVP_DigestVerifyInit")
            }
            message = data
        case .ed25519:
            guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else {
                throw .openSSL(.openSSLFailure, call: "EVP_DigestVerifyInit")
            }
            message = try SHA256Hasher.digest(data)
        }
        let matches = EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
        if !matches { ERR_clear_error() }  // a mismatch is an answer, not a failure
        return matches
    }
}
