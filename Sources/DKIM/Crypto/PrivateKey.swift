internal import COpenSSL

/// A signing key: RSA or Ed25519, loaded from PEM or generated. Owns exactly one `EVP_PKEY`.
package final class PrivateKey: @unchecked Sendable {
    // Sendable: `key` never changes after init; each signature uses its own EVP_MD_CTX.
    private let key: OpaquePointer
    package let type: KeyRecord.KeyType
    package let bits: Int

    private init(key: OpaquePointer) throws(DKIMError) {
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA: type = .rsa
        case EVP_PKEY_ED25519: type = .ed25519
        default:
            EVP_PKEY_free(key)
            throw DKIMError(code: .privateKeyInvalid, reason: "the private key is neither RSA nor Ed25519")
        }
        self.key = key
        bits = Int(EVP_PKEY_get_bits(key))
    }

    deinit { EVP_PKEY_free(key) }

    /// Reads a PEM private key (PKCS#8 `PRIVATE KEY` or PKCS#1 `RSA PRIVATE KEY`), unencrypted.
    package convenience init(pem: String) throws(DKIMError) {
        let bytes = Array(pem.utf8)
        let parsed: OpaquePointer? = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let parsed else {
            ERR_clear_error()
            throw DKIMError(code: .privateKeyInvalid, reason: "the file is not an unencrypted PEM private key (RSA or Ed25519)")
        }
        try self.init(key: parsed)
    }

    /// Generates a new key.
    /// - Parameter bits: RSA modulus size; ignored for Ed25519.
    package static func generate(type: KeyRecord.KeyType, bits: Int = 2048) throws(DKIMError) -> PrivateKey {
        guard let context = EVP_PKEY_CTX_new_id(type == .rsa ? EVP_PKEY_RSA : EVP_PKEY_ED25519, nil) else {
            throw .openSSL(.openSSLFailure, call: "EVP_PKEY_CTX_new_id")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw .openSSL(.openSSLFailure, call: "EVP_PKEY_keygen_init") }
        if type == .rsa {
            guard copenssl_set_rsa_keygen_bits(context, Int32(bits)) == 1 else {
                throw .openSSL(.openSSLFailure, call: "EVP_PKEY_CTX_set_rsa_keygen_bits")
            }
        }
        var generated: OpaquePointer? = nil
        guard EVP_PKEY_keygen(context, &generated) == 1, let generated else {
            throw .openSSL(.openSSLFailure, call: "EVP_PKEY_keygen")
        }
        return try PrivateKey(key: generated)
    }

    /// The key as PKCS#8 PEM.
    package func pem() throws(DKIMError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL(.openSSLFailure, call: "BIO_new") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else {
            throw .openSSL(.openSSLFailure, call: "PEM_write_bio_PrivateKey")
        }
        return try Self.read(bio)
    }

    /// The `p=` value for the key record: base64 of the SubjectPublicKeyInfo (RSA) or of the 32 raw
    /// public key bytes (Ed25519, RFC 8463 §4).
    package func publicKeyRecordData() throws(DKIMError) -> [UInt8] {
        switch type {
        case .rsa:
            var buffer: UnsafeMutablePointer<UInt8>? = nil
            let length = i2d_PUBKEY(key, &buffer)
            guard length > 0, let buffer else { throw .openSSL(.openSSLFailure, call: "i2d_PUBKEY") }
            defer { copenssl_free(buffer) }
            return Array(UnsafeBufferPointer(start: buffer, count: Int(length)))
        case .ed25519:
            var raw = [UInt8](repeating: 0, count: 32)
            var length = 32
            guard EVP_PKEY_get_raw_public_key(key, &raw, &length) == 1, length == 32 else {
                throw .openSSL(.openSSLFailure, call: "EVP_PKEY_get_raw_public_key")
            }
            return raw
        }
    }

    /// Signs `data` the way `PublicKey.isValidSignature` checks it.
    func sign(_ data: [UInt8]) throws(DKIMError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw .openSSL(.openSSLFailure, call: "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        let message: [UInt8]
        switch type {
        case .rsa:
            guard EVP_DigestSignInit(context, nil, MessageDigests.shared.sha256, nil, key) == 1 else {
                throw .openSSL(.openSSLFailure, call: "EVP_DigestSignInit")
            }
            message = data
        case .ed25519:
            guard EVP_DigestSignInit(context, nil, nil, nil, key) == 1 else {
                throw .openSSL(.openSSLFailure, call: "EVP_DigestSignInit")
            }
            message = try SHA256Hasher.digest(data)
        }
        var length = 0
        guard EVP_DigestSign(context, nil, &length, message, message.count) == 1 else {
            throw .openSSL(.openSSLFailure, call: "EVP_DigestSign")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, message, message.count) == 1 else {
            throw .openSSL(.openSSLFailure, call: "EVP_DigestSign")
        }
        return Array(signature.prefix(length))
    }

    private static func read(_ bio: OpaquePointer) throws(DKIMError) -> String {
        var pointer: UnsafeMutablePointer<CChar>? = nil
        let length = copenssl_bio_get_mem_data(bio, &pointer)
        guard length > 0, let pointer else { throw .openSSL(.openSSLFailure, call: "BIO_get_mem_data") }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
        return String(decoding: bytes, as: UTF8.self)
    }
}
