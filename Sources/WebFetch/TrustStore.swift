internal import COpenSSL

/// The CA certificates the fetcher trusts, and RFC 5280 path validation plus the RFC 6125 host
/// check against them, through OpenSSL 3's `X509_verify_cert`.
///
/// Why OpenSSL rather than the verification BoringSSL performs inside swift-nio-ssl: BoringSSL
/// reports every chain failure as one `CERTIFICATE_VERIFY_FAILED`, NIOSSL does not expose the
/// verification result, and its only per-certificate hook is deprecated. NIOSSL's custom
/// verification callback replaces BoringSSL's chain check, so the chain is checked here, with the
/// exact `X509_V_ERR_*` reason, which maps one to one onto the certificate error codes. The TLS
/// handshake itself, including the server's proof that it holds the leaf's key, stays BoringSSL's.
final class TrustStore: @unchecked Sendable {
    // Sendable: `store` is filled in `init` and never changed after; OpenSSL locks an X509_STORE
    // internally, so concurrent `X509_verify_cert` calls on it are safe (OpenSSL 3 threads(7)).
    private let store: OpaquePointer

    /// The system trust store as OpenSSL was built to find it (Debian: `/usr/lib/ssl/cert.pem`,
    /// i.e. `/etc/ssl/certs/ca-certificates.crt`, and the hashed `/etc/ssl/certs`), never from the
    /// environment, plus the PEM bundles named.
    /// - Throws: `web.trust-bundle-invalid` when a bundle cannot be read or holds no certificate.
    init(additionalBundles: [String]) throws(FetchError) {
        guard let store = X509_STORE_new() else {
            throw FetchError(code: .trustBundleInvalid, reason: "OpenSSL could not allocate a trust store")
        }
        self.store = store
        // A machine without ca-certificates has no system store: then only the bundles are trusted.
        if X509_STORE_load_file(store, X509_get_default_cert_file()) != 1 { ERR_clear_error() }
        if X509_STORE_load_path(store, X509_get_default_cert_dir()) != 1 { ERR_clear_error() }
        for path in additionalBundles {
            let count = Self.certificateCount(inPEMFile: path)
            guard count > 0, X509_STORE_load_file(store, path) == 1 else {
                ERR_clear_error()
                throw FetchError(
                    code: .trustBundleInvalid,
                    reason: count < 0
                        ? "the trust bundle \(path) cannot be read; check the path and its permissions"
                        : "the trust bundle \(path) holds no PEM certificate (only CA certificates belong there)"
                )
            }
        }
    }

    deinit { X509_STORE_free(store) }

    /// A verification that did not pass: OpenSSL's `X509_V_ERR_*` code and the chain depth.
    struct Failure: Error, Sendable, Equatable {
        let code: Int32
        let depth: Int32

        var isValidityPeriod: Bool {
            code == X509_V_ERR_CERT_HAS_EXPIRED || code == X509_V_ERR_CERT_NOT_YET_VALID
        }
        var isNameMismatch: Bool {
            code == X509_V_ERR_HOSTNAME_MISMATCH || code == X509_V_ERR_IP_ADDRESS_MISMATCH
        }
        /// The chain could not be handed over or checked at all.
        static let unreadable = Failure(code: X509_V_ERR_UNSPECIFIED, depth: 0)

        /// OpenSSL's text for the code, e.g. "certificate has expired".
        var text: String { String(cString: X509_verify_cert_error_string(Int(code))) }
    }

    /// Verifies a chain as presented by a TLS server (leaf first) for `host` or, for an IP
    /// literal URL, for `address`: the purpose is TLS server authentication (as OpenSSL's own
    /// TLS client sets it), partial wildcards such as `b*.example.com` do not match (RFC 6125
    /// §6.4.3), and security level 2 refuses keys under 112 bits and SHA-1 signatures.
    /// - Returns: nil when the chain is valid for the host now, else why not.
    func verify(chain der: [[UInt8]], host: String?, address: IPAddress?) -> Failure? {
        var certificates: [OpaquePointer] = []
        defer { certificates.forEach { X509_free($0) } }
        for bytes in der {
            guard
                let certificate = bytes.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                    var cursor = buffer.baseAddress
                    return d2i_X509(nil, &cursor, buffer.count)
                })
            else {
                ERR_clear_error()
                return Failure(code: X509_V_ERR_UNSPECIFIED, depth: Int32(certificates.count))
            }
            certificates.append(certificate)
        }
        guard let leaf = certificates.first else { return Failure(code: X509_V_ERR_UNSPECIFIED, depth: 0) }

        // The intermediates the server sent, for path building only; they are not trusted.
        guard let intermediates = OPENSSL_sk_new_null() else { return Failure(code: X509_V_ERR_OUT_OF_MEM, depth: 0) }
        defer { OPENSSL_sk_free(intermediates) }  // the certificates are freed above
        for certificate in certificates.dropFirst() {
            guard OPENSSL_sk_push(intermediates, UnsafeRawPointer(certificate)) > 0 else {
                return Failure(code: X509_V_ERR_OUT_OF_MEM, depth: 0)
            }
        }
        guard let context = X509_STORE_CTX_new() else { return Failure(code: X509_V_ERR_OUT_OF_MEM, depth: 0) }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf, intermediates) == 1,
            X509_STORE_CTX_set_default(context, "ssl_server") == 1,
            let parameters = X509_STORE_CTX_get0_param(context)
        else {
            ERR_clear_error()
            return Failure(code: X509_V_ERR_UNSPECIFIED, depth: 0)
        }
        X509_VERIFY_PARAM_set_auth_level(parameters, 2)
        X509_VERIFY_PARAM_set_hostflags(parameters, Self.noPartialWildcards)
        if let host {
            guard X509_VERIFY_PARAM_set1_host(parameters, host, host.utf8.count) == 1 else {
                ERR_clear_error()
                return Failure(code: X509_V_ERR_HOSTNAME_MISMATCH, depth: 0)
            }
        } else if let address {
            guard X509_VERIFY_PARAM_set1_ip_asc(parameters, address.description) == 1 else {
                ERR_clear_error()
                return Failure(code: X509_V_ERR_IP_ADDRESS_MISMATCH, depth: 0)
            }
        }
        if X509_verify_cert(context) == 1 { return nil }
        ERR_clear_error()
        return Failure(code: X509_STORE_CTX_get_error(context), depth: X509_STORE_CTX_get_error_depth(context))
    }

    /// `X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS` from `openssl/x509v3.h`, which the COpenSSL shim
    /// does not include.
    private static let noPartialWildcards: UInt32 = 0x4

    /// How many certificates a PEM file holds; -1 when it cannot be opened.
    private static func certificateCount(inPEMFile path: String) -> Int {
        guard let bio = BIO_new_file(path, "r") else {
            ERR_clear_error()
            return -1
        }
        defer { BIO_free(bio) }
        var count = 0
        while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            X509_free(certificate)
            count += 1
        }
        ERR_clear_error()  // the end of the file reads as an error
        return count
    }
}
