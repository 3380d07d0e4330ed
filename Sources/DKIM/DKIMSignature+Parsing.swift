import Foundation
internal import MailMessage

/// What the parser could read before it failed: enough to label the result.
struct PartialSignature: Sendable {
    var signingDomain: String?
    var selector: String?
    var algorithm: String?
    var identity: String?
    var signedHeaders: [String] = []
    var signatureText: String?
}

extension DKIMSignature {
    /// Parses and checks the DKIM-Signature field at `index` (RFC 6376 §3.5, §6.1.1).
    ///
    /// - Parameters:
    ///   - partial: filled with whatever could be read, so a failure can still name the domain and selector.
    /// - Throws: `DKIMError` with a permerror code for a field a verifier must ignore.
    static func parse(
        fieldAt index: Int,
        of message: RawMessage,
        partial: inout PartialSignature
    ) throws(DKIMError) -> DKIMSignature {
        let field = message.headerFields[index]
        let tags = try TagList(parsing: field.rawValue, what: "DKIM-Signature")

        partial.signingDomain = tags["d"]?.lowercased()
        partial.selector = tags["s"]
        partial.algorithm = tags["a"]
        partial.identity = tags["i"]
        // b= without folding: the signature text for results, and the base64 to decode (computed once: it is long).
        let compactSignature = tags["b"]?.removingFoldingWhitespace
        partial.signatureText = compactSignature
        let headerList = tags["h"].map(parseHeaderList)
        if let headerList { partial.signedHeaders = headerList }

        for required in ["v", "a", "b", "bh", "d", "h", "s"] where tags[required] == nil {
            throw DKIMError(code: .missingTag, reason: "DKIM-Signature has no \(required)= tag; RFC 6376 §3.5 requires v, a, b, bh, d, h and s")
        }
        guard tags["v"] == "1" else {
            throw DKIMError(code: .unsupportedVersion, reason: "DKIM-Signature v=\(tags["v"] ?? "") is not supported; use v=1")
        }
        guard let algorithm = Algorithm(rawValue: tags["a"]!.lowercased()) else {
            throw DKIMError(code: .unknownAlgorithm, reason: "DKIM-Signature a=\(tags["a"]!) is not a known algorithm; use rsa-sha256 or ed25519-sha256")
        }
        let (headerCanonicalization, bodyCanonicalization) = try parseCanonicalization(tags["c"])
        if let q = tags["q"] {
            let methods = q.split(separator: ":").map { $0.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() }
            guard methods.contains(where: { $0 == "dns/txt" || $0 == "dns" }) else {
                throw DKIMError(code: .unsupportedQueryMethod, reason: "DKIM-Signature q=\(q) names no supported query method; use q=dns/txt")
            }
        }

        let signingDomain = tags["d"]!.lowercased()
        guard isValidDomain(signingDomain) else {
            throw DKIMError(code: .invalidTag, reason: "DKIM-Signature d=\(tags["d"]!) is not a domain name")
        }
        let selector = tags["s"]!
        guard isValidSelector(selector) else {
            throw DKIMError(code: .invalidTag, reason: "DKIM-Signature s=\(selector) is not a valid selector (dot-separated labels of letters, digits and hyphens)")
        }

        let signedHeaders = headerList!
        guard !signedHeaders.isEmpty, signedHeaders.allSatisfy({ !$0.isEmpty && !$0.contains(" ") }) else {
            throw DKIMError(code: .invalidTag, reason: "DKIM-Signature h=\(tags["h"]!) is not a colon-separated list of header field names")
        }
        guard signedHeaders.contains("from") else {
            throw DKIMError(code: .fromNotSigned, reason: "DKIM-Signature h= does not include From; RFC 6376 §5.4 requires the From field to be signed")
        }

        let identity = tags["i"] ?? "@\(signingDomain)"
        try checkIdentity(identity, within: signingDomain)

        var bodyLength: Int? = nil
        if let l = tags["l"] {
            guard !l.isEmpty, l.count <= 76, l.utf8.allSatisfy(\.isASCIIDigit), let value = Int(l) else {
                throw DKIMError(code: .invalidTag, reason: "DKIM-Signature l=\(l) is not a decimal byte count")
            }
            bodyLength = value
        }
        let timestamp = try parseTime(tags["t"], tag: "t")
        let expiration = try parseTime(tags["x"], tag: "x")
        if let timestamp, let expiration, expiration <= timestamp {
            throw DKIMError(code: .invalidTag, reason: "DKIM-Signature x= is not after t=; RFC 6376 §3.5 requires the expiry to follow the signing time")
        }

        guard let bodyHash = decodeBase64(tags["bh"]!) else {
            throw DKIMError(code: .invalidTag, reason: "DKIM-Signature bh= is not valid base64")
        }
        let signatureText = compactSignature!
        guard let signature = decodeBase64(signatureText), !signature.isEmpty else {
            throw DKIMError(code: .invalidTag, reason: "DKIM-Signature b= is empty or not valid base64")
        }

        let bRange = tags.tag("b")!.rawValueRange
        let fieldStart = field.raw.startIndex
        let signatureValueRange = (bRange.lowerBound - fieldStart)..<(bRange.upperBound - fieldStart)

        return DKIMSignature(
            algorithm: algorithm,
            signature: signature,
            bodyHash: bodyHash,
            headerCanonicalization: headerCanonicalization,
            bodyCanonicalization: bodyCanonicalization,
            signingDomain: signingDomain,
            signedHeaders: signedHeaders,
            identity: identity,
            bodyLength: bodyLength,
            selector: selector,
            timestamp: timestamp,
            expiration: expiration,
            field: HeaderFieldReference(index: index, signatureValueRange: signatureValueRange),
            signatureText: signatureText
        )
    }

    /// `h=` is a colon-separated list; folding whitespace may surround each name (RFC 6376 §3.5).
    static func parseHeaderList(_ value: String) -> [String] {
        // Tag values are ASCII (TagList admits only VALCHAR and FWS), and for ASCII text splitting and
        // lower-casing the UTF-8 bytes is splitting and lower-casing the characters, without the cost of
        // grapheme breaking. Anything else takes the general path.
        guard value.utf8.allSatisfy({ $0 < 0x80 }) else {
            return value.split(separator: ":", omittingEmptySubsequences: false).map {
                $0.removingFoldingWhitespace.lowercased()
            }
        }
        return value.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false).map { name in
            var bytes = [UInt8]()
            bytes.reserveCapacity(name.count)
            for byte in name where byte != 0x20 && byte != 0x09 && byte != 0x0D && byte != 0x0A {
                bytes.append(byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// `c=header/body`; a missing body part means simple; a missing tag means simple/simple (RFC 6376 §3.5).
    static func parseCanonicalization(_ value: String?) throws(DKIMError) -> (Canonicalization, Canonicalization) {
        guard let value else { return (.simple, .simple) }
        let parts = value.lowercased().split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2,
            let header = Canonicalization(rawValue: String(parts[0])),
            let body = parts.count == 2 ? Canonicalization(rawValue: String(parts[1])) : .simple
        else {
            throw DKIMError(code: .unknownCanonicalization, reason: "DKIM-Signature c=\(value) is not simple or relaxed for header/body")
        }
        return (header, body)
    }

    /// `i=` must be an address or `@domain` whose domain is `d=` or a subdomain of it (RFC 6376 §3.5).
    static func checkIdentity(_ identity: String, within signingDomain: String) throws(DKIMError) {
        guard let at = identity.lastIndex(of: "@") else {
            throw DKIMError(code: .invalidTag, reason: "DKIM-Signature i=\(identity) has no '@'; write it as [local-part]@domain")
        }
        let domain = identity[identity.index(after: at)...].lowercased()
        guard domain == signingDomain || domain.hasSuffix("." + signingDomain) else {
            throw DKIMError(code: .identityMismatch, reason: "DKIM-Signature i= domain \(domain) is not \(signingDomain) or a subdomain of it (RFC 6376 §3.5)")
        }
    }

    static func parseTime(_ value: String?, tag: String) throws(DKIMError) -> Date? {
        guard let value else { return nil }
        // At most 12 digits: enough for any date the 40-bit rule of RFC 6376 §3.5 allows.
        guard !value.isEmpty, value.count <= 12, value.utf8.allSatisfy(\.isASCIIDigit), let seconds = UInt64(value) else {
            throw DKIMError(code: .invalidTag, reason: "DKIM-Signature \(tag)=\(value) is not a number of seconds since 1970")
        }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    static func isValidDomain(_ domain: String) -> Bool {
        func isLabelByte(_ byte: UInt8) -> Bool {
            byte.isASCIILetter || byte.isASCIIDigit || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                || byte >= 0x80
        }
        guard !domain.isEmpty, domain.utf8.count <= 253 else { return false }
        // ASCII (every d= and s= that TagList admits): split the bytes, as splitting the characters would.
        if domain.utf8.allSatisfy({ $0 < 0x80 }) {
            let labels = domain.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            return labels.allSatisfy { label in !label.isEmpty && label.count <= 63 && label.allSatisfy(isLabelByte) }
        }
        return domain.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && label.utf8.allSatisfy(isLabelByte)
        }
    }

    static func isValidSelector(_ selector: String) -> Bool { isValidDomain(selector.lowercased()) }
}

/// Base64 as DKIM writes it: folding whitespace allowed anywhere, padding required (RFC 6376 §2.4).
func decodeBase64(_ text: String) -> [UInt8]? {
    let compact = text.removingFoldingWhitespace
    guard let data = Data(base64Encoded: compact) else { return nil }
    return [UInt8](data)
}
