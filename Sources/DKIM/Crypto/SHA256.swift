internal import COpenSSL

/// SHA-256 through OpenSSL's EVP interface, fed incrementally. Owns one `EVP_MD_CTX`.
final class SHA256Hasher {
    private let context: OpaquePointer

    init() throws(DKIMError) {
        guard let context = EVP_MD_CTX_new() else { throw .openSSL(.openSSLFailure, call: "EVP_MD_CTX_new") }
        self.context = context
        guard EVP_DigestInit_ex(context, MessageDigests.shared.sha256, nil) == 1 else {
            throw .openSSL(.openSSLFailure, call: "EVP_DigestInit_ex")
        }
    }

    deinit { EVP_MD_CTX_free(context) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        // EVP_DigestUpdate on an initialised SHA-256 context cannot fail.
        _ = EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    func update(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { update($0) }
    }

    func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    func finish() throws(DKIMError) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1, length == 32 else {
            throw .openSSL(.openSSLFailure, call: "EVP_DigestFinal_ex")
        }
        return digest
    }

    static func digest(_ bytes: [UInt8]) throws(DKIMError) -> [UInt8] {
        let hasher = try SHA256Hasher()
        hasher.update(bytes)
        return try hasher.finish()
    }
}

/// Digest implementations fetched once: OpenSSL 3's implicit fetch on every `EVP_sha256()` use
/// costs a lock and a lookup per message.
final class MessageDigests: @unchecked Sendable {
    // Sendable: the pointers are set once in init and EVP_MD objects are immutable and thread-safe.
    static let shared = MessageDigests()
    let sha256: OpaquePointer

    private init() {
        sha256 = EVP_MD_fetch(nil, "SHA256", nil) ?? EVP_sha256()!
    }
}

/// SHA-256 for other targets (content hashes in the decision log), through the same OpenSSL digest.
package enum ContentHash {
    /// The lower-case hex SHA-256 of `bytes`.
    package static func sha256Hex(_ bytes: [UInt8]) -> String {
        let digest = (try? SHA256Hasher.digest(bytes)) ?? []
        let hex = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in digest {
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
