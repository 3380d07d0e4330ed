internal import COpenSSL
import Synchronization

/// A public key from a DKIM key record. Owns exactly one `EVP_PKEY`, and the RSA verification
/// contexts made for it.
final class PublicKey: @unchecked Sendable {
    // Sendable: `key` never changes after init, and OpenSSL allows concurrent verifications
    // with one EVP_PKEY (each uses its own context). A pooled context is used by one
    // verification at a time: it is taken out of `contexts` under the lock and put back after.
    private let key: OpaquePointer
    let type: KeyRecord.KeyType
    let bits: Int
    /// RSA verification contexts ready for `EVP_PKEY_verify`. Preparing one (OpenSSL 3 fetches the
    /// signature implementation and sets up the key's provider data) costs more than a 2048-bit
    /// verification itself, so a key that is used again keeps a few.
    private let contexts = Mutex<[VerifyContext]>([])
    private static let pooledContexts = 8

    /// An `EVP_PKEY_CTX` in the pool.
    private struct VerifyContext: @unchecked Sendable {
        // Sendable: a pooled context belongs to the pool alone; whoever takes it out is its only user
        // until it is put back or freed.
        let pointer: OpaquePointer
    }

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

    deinit {
        contexts.withLock { contexts in
            for context in contexts { EVP_PKEY_CTX_free(context.pointer) }
            contexts.removeAll()
        }
        EVP_PKEY_free(key)
    }

    /// Checks `signature` over `data` (RFC 6376 §3.3: RSASSA-PKCS1-v1_5 with SHA-256 over the header
    /// hash input; RFC 8463 §3: PureEdDSA over the SHA-256 digest of that input).
    /// - Returns: false for a signature that does not match (an answer, not a failure).
    func isValidSignature(_ signature: [UInt8], for data: [UInt8]) throws(DKIMError) -> Bool {
        switch type {
        case .rsa:
            // RSASSA-PKCS1-v1_5 over the SHA-256 digest, as EVP_DigestVerify would do it, with a reused context.
            let digest = try SHA256Hasher.digest(data)
            let context = try takeRSAContext()
            let matches = EVP_PKEY_verify(context, signature, signature.count, digest, digest.count) == 1
            if !matches { ERR_clear_error() }  // a mismatch is an answer, not a failure
            returnRSAContext(context)
            return matches
        case .ed25519:
            guard let context = EVP_MD_CTX_new() else { throw .openSSL(.openSSLFailure, call: "EVP_MD_CTX_new") }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestVerifyInit(context, nil, nil, nil, key) == 1 else {
                throw .openSSL(.openSSLFailure, call: "EVP_DigestVerifyInit")
            }
            let message = try SHA256Hasher.digest(data)
            let matches = EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
            if !matches { ERR_clear_error() }
            return matches
        }
    }

    /// A pooled RSA verification context, or a new one: PKCS#1 v1.5 padding, SHA-256 (RFC 6376 §3.3.1).
    private func takeRSAContext() throws(DKIMError) -> OpaquePointer {
        if let context = contexts.withLock({ $0.popLast() }) { return context.pointer }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else {
            throw .openSSL(.openSSLFailure, call: "EVP_PKEY_CTX_new_from_pkey")
        }
        guard EVP_PKEY_verify_init(context) == 1,
            EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1,
            EVP_PKEY_CTX_set_signature_md(context, MessageDigests.shared.sha256) == 1
        else {
            EVP_PKEY_CTX_free(context)
            throw .openSSL(.openSSLFailure, call: "EVP_PKEY_verify_init")
        }
        return context
    }

    private func returnRSAContext(_ context: OpaquePointer) {
        let kept = contexts.withLock { contexts -> Bool in
            guard contexts.count < Self.pooledContexts else { return false }
            contexts.append(VerifyContext(pointer: context))
            return true
        }
        if !kept { EVP_PKEY_CTX_free(context) }
    }
}
