internal import COpenSSL
internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

extension PeerCertificate {
    /// Reads the names, validity and fingerprint of a DER-encoded certificate with OpenSSL 3.
    /// Returns nil when the bytes are not a certificate (a TLS stack that accepted them would
    /// never hand such bytes over; nil keeps a parsing bug from crashing the fetch).
    init?(der: [UInt8]) {
        guard !der.isEmpty,
            let certificate = der.withUnsafeBufferPointer({ buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_X509(nil, &cursor, buffer.count)
            })
        else { return nil }
        defer { X509_free(certificate) }

        guard let subject = Self.rfc4514(X509_get_subject_name(certificate)),
            let issuer = Self.rfc4514(X509_get_issuer_name(certificate)),
            let notAfter = Self.date(X509_get0_notAfter(certificate)),
            let fingerprint = Self.sha256Hex(der)
        else { return nil }
        self.init(subject: subject, issuer: issuer, sha256Fingerprint: fingerprint, notAfter: notAfter, der: der)
    }

    /// A distinguished name as RFC 4514 (RFC 2253) text, most specific RDN first, UTF-8 kept.
    private static func rfc4514(_ name: OpaquePointer?) -> String? {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        // XN_FLAG_RFC2253 without ASN1_STRFLGS_ESC_MSB (so UTF-8 stays UTF-8); the composite macro
        // does not import into Swift, its parts do.
        let strings =
            UInt(ASN1_STRFLGS_ESC_2253) | UInt(ASN1_STRFLGS_ESC_CTRL) | UInt(ASN1_STRFLGS_UTF8_CONVERT)
            | UInt(ASN1_STRFLGS_DUMP_UNKNOWN) | UInt(ASN1_STRFLGS_DUMP_DER)
        let flags =
            strings | UInt(XN_FLAG_SEP_COMMA_PLUS) | UInt(XN_FLAG_DN_REV) | UInt(XN_FLAG_FN_SN)
            | UInt(XN_FLAG_DUMP_UNKNOWN_FIELDS)
        guard X509_NAME_print_ex(bio, name, 0, flags) >= 0 else {
            ERR_clear_error()
            return nil
        }
        var data: UnsafeMutablePointer<CChar>?
        let length = copenssl_bio_get_mem_data(bio, &data)
        guard length >= 0, let data else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else {
            ERR_clear_error()
            return nil
        }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }

    private static func sha256Hex(_ bytes: [UInt8]) -> String? {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_Digest(bytes, bytes.count, &digest, &length, EVP_sha256(), nil) == 1, length == 32 else {
            ERR_clear_error()
            return nil
        }
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in digest.prefix(32) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
