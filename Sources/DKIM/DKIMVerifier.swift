package import DNS
package import Foundation
package import MailMessage
import Synchronization

/// Verifies the DKIM signatures of a message (RFC 6376 §6, RFC 8301, RFC 8463).
///
/// Every `DKIM-Signature` field gets its own `DKIMSignatureResult`; the message passes if any
/// signature passes. Keys come from `resolver`; parsed keys are cached by their record text.
package struct DKIMVerifier: Sendable {
    package struct Configuration: Sendable {
        /// Tolerance for `t=` in the future and `x=` in the past (RFC 6376 §3.5 allows "reasonable" skew).
        package var clockSkew: TimeInterval = 300
        /// RSA keys shorter than this are refused (RFC 8301 §3.2: at least 1024).
        package var minimumRSAKeyBits = 1024
        /// Signatures beyond this many are not evaluated (each costs a DNS lookup).
        package var maximumSignatures = 8
        /// The clock; tests pass a fixed instant.
        package var now: @Sendable () -> Date = { Date() }

        package init() {}
    }

    package let configuration: Configuration
    private let resolver: any TXTResolver
    private let keys: KeyCache

    package init(resolver: any TXTResolver, configuration: Configuration = Configuration()) {
        self.resolver = resolver
        self.configuration = configuration
        self.keys = KeyCache()
    }

    /// Verifies every DKIM-Signature of `message` on its exact bytes.
    package func verify(_ message: RawMessage) async -> DKIMVerification {
        let indices = message.headerFields.indices.filter { message.headerFields[$0].lowercasedName == "dkim-signature" }
        var bodyHashes: [BodyHashKey: Canonicalization.BodyHash] = [:]
        var results: [DKIMSignatureResult] = []
        for (position, index) in indices.enumerated() {
            if position >= configuration.maximumSignatures {
                var result = DKIMSignatureResult(
                    result: .permerror, code: .tooManySignatures,
                    reason: "only the first \(configuration.maximumSignatures) DKIM signatures are evaluated",
                    signedHeaders: [], bodyBytes: message.body.count)
                result.signatureFingerprint = nil
                results.append(result)
                continue
            }
            results.append(await verifySignature(at: index, of: message, bodyHashes: &bodyHashes))
        }
        return DKIMVerification(signatures: results)
    }

    private struct BodyHashKey: Hashable {
        var canonicalization: DKIMSignature.Canonicalization
        var limit: Int?
    }

    private func verifySignature(
        at index: Int,
        of message: RawMessage,
        bodyHashes: inout [BodyHashKey: Canonicalization.BodyHash]
    ) async -> DKIMSignatureResult {
        var partial = PartialSignature()
        var result = DKIMSignatureResult(result: .permerror, code: nil, reason: "", signedHeaders: [], bodyBytes: message.body.count)
        func finish(_ error: DKIMError) -> DKIMSignatureResult {
            result.result = DKIMResult.for(error.code)
            result.code = error.code
            result.reason = error.reason
            result.signingDomain = result.signingDomain ?? partial.signingDomain
            result.selector = result.selector ?? partial.selector
            result.algorithm = result.algorithm ?? partial.algorithm
            result.identity = result.identity ?? partial.identity
            if result.signedHeaders.isEmpty { result.signedHeaders = partial.signedHeaders }
            result.signatureFingerprint = result.signatureFingerprint ?? partial.signatureText.map { String($0.prefix(8)) }
            return result
        }

        let signature: DKIMSignature
        do {
            signature = try DKIMSignature.parse(fieldAt: index, of: message, partial: &partial)
        } catch {
            return finish(error)
        }
        result.signingDomain = signature.signingDomain
        result.selector = signature.selector
        result.algorithm = signature.algorithm.rawValue
        result.identity = signature.identity
        result.signedHeaders = signature.signedHeaders
        result.bodyLengthLimit = signature.bodyLength
        result.timestamp = signature.timestamp
        result.signatureFingerprint = String(signature.signatureText.prefix(8))

        do throws(DKIMError) {
            try checkTimes(signature)
            // RFC 8301 §3.1: rsa-sha1 signatures must not be considered valid.
            guard signature.algorithm != .rsaSHA1 else {
                throw DKIMError(code: .algorithmRefused, reason: "signature uses rsa-sha1, which RFC 8301 forbids; sign with rsa-sha256 or ed25519-sha256")
            }
            let (key, record) = try await fetchKey(for: signature)
            result.keyBits = key.bits
            // RFC 8301 §3.2: RSA keys under 1024 bits must not be considered valid.
            if key.type == .rsa && key.bits < configuration.minimumRSAKeyBits {
                throw DKIMError.weakKey(bits: key.bits, selector: signature.selector, domain: signature.signingDomain)
            }

            // Body hash (RFC 6376 §6.1.3 step 1-2), shared between signatures with the same c= and l=.
            let hashKey = BodyHashKey(canonicalization: signature.bodyCanonicalization, limit: signature.bodyLength)
            let bodyHash: Canonicalization.BodyHash
            if let cached = bodyHashes[hashKey] {
                bodyHash = cached
            } else {
                bodyHash = try Canonicalization.bodyHash(message.body, signature.bodyCanonicalization, limit: signature.bodyLength)
                bodyHashes[hashKey] = bodyHash
            }
            result.signedBodyBytes = bodyHash.signedRawBytes
            if let length = signature.bodyLength, length > bodyHash.canonicalLength {
                throw DKIMError(code: .bodyLengthExceeded, reason: "l=\(length) is longer than the \(bodyHash.canonicalLength)-byte canonicalized body; the body was cut or the signer miscounted")
            }
            guard bodyHash.digest == signature.bodyHash else {
                throw DKIMError(code: .bodyHashMismatch, reason: "the body hash does not match bh=: the body was changed after signing (a footer added, re-encoded, or line endings altered)")
            }

            let input = headerHashInput(for: signature, in: message)
            guard try key.isValidSignature(signature.signature, for: input) else {
                throw DKIMError(code: .signatureMismatch, reason: "the signature in b= does not verify with the key at \(signature.keyName): a signed header field was changed, or the key does not match the private key used")
            }
            if record.isTesting {
                throw DKIMError(code: .keyTesting, reason: "the signature verifies, but \(signature.keyName) is in testing mode (t=y), which RFC 6376 §3.6.1 says must not be trusted over unsigned mail; remove t=y from the key record")
            }
            result.result = .pass
            result.reason = "signature verified with the \(key.bits)-bit \(key.type.rawValue) key at \(signature.keyName)"
            return result
        } catch {
            return finish(error)
        }
    }

    /// `x=` in the past or `t=` in the future, beyond the allowed skew (RFC 6376 §3.5).
    private func checkTimes(_ signature: DKIMSignature) throws(DKIMError) {
        let now = configuration.now()
        if let expiration = signature.expiration, expiration.addingTimeInterval(configuration.clockSkew) < now {
            throw DKIMError(code: .signatureExpired, reason: "the signature expired at \(expiration.formatted(.iso8601)) (x=); sign again or give a later x=")
        }
        if let timestamp = signature.timestamp, timestamp > now.addingTimeInterval(configuration.clockSkew) {
            throw DKIMError(code: .signatureInFuture, reason: "the signature claims to be made at \(timestamp.formatted(.iso8601)) (t=), in the future; check the signer's clock")
        }
    }

    /// Fetches and checks the key record (RFC 6376 §6.1.2).
    private func fetchKey(for signature: DKIMSignature) async throws(DKIMError) -> (PublicKey, KeyRecord) {
        let name = signature.keyName
        let records: [TXTRecord]
        do {
            records = try await resolver.txtRecords(for: name)
        } catch {
            throw Self.keyLookupError(error, name: name)
        }
        // Several TXT records: use the first that is a usable DKIM key record (RFC 6376 §3.6.2.2).
        var firstError: DKIMError? = nil
        for record in records {
            do {
                return try keys.key(for: record.joined, name: name, signature: signature)
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        throw firstError ?? DKIMError(code: .keyNotFound, reason: "\(name) has no TXT record; publish the key record there")
    }

    static func keyLookupError(_ error: DNSError, name: String) -> DKIMError {
        switch error.code {
        case .nameNotFound, .noData, .invalidName:
            DKIMError(code: .keyNotFound, reason: "no key record at \(name) (\(error.code)); publish the selector's TXT record or fix s=/d=")
        case .timeout:
            DKIMError(code: .dnsTimeout, reason: "the lookup of \(name) timed out; it will be retried")
        case .serverFailure:
            DKIMError(code: .dnsServerFailure, reason: "the nameserver answered SERVFAIL for \(name); it will be retried")
        case .refused:
            DKIMError(code: .dnsRefused, reason: "the nameserver refused the query for \(name); it will be retried")
        case .network:
            DKIMError(code: .dnsUnreachable, reason: "no nameserver could be reached for \(name) (\(error.reason)); it will be retried")
        case .malformedResponse:
            DKIMError(code: .dnsMalformed, reason: "the answer for \(name) could not be read (\(error.reason)); it will be retried")
        default:
            DKIMError(code: .dnsError, reason: "the lookup of \(name) could not be made (\(error.reason)); it will be retried")
        }
    }

    /// The bytes the header signature covers (RFC 6376 §3.7, §5.4.2): each field named in `h=`, taken
    /// from the bottom up (a name listed twice takes the next field up; a name with no field left adds
    /// nothing), then this DKIM-Signature field with its `b=` value emptied and no trailing CRLF.
    func headerHashInput(for signature: DKIMSignature, in message: RawMessage) -> [UInt8] {
        Canonicalization.headerHashInput(
            signedHeaders: signature.signedHeaders,
            canonicalization: signature.headerCanonicalization,
            signatureField: message.headerFields[signature.field.index],
            signatureValueRange: signature.field.signatureValueRange,
            in: message
        )
    }
}

extension Canonicalization {
/// Shared by the verifier and the signer: one place for the §5.4.2 selection rule.
static func headerHashInput(
    signedHeaders: [String],
    canonicalization: DKIMSignature.Canonicalization,
    signatureField: HeaderField,
    signatureValueRange: Range<Int>,
    in message: RawMessage
) -> [UInt8] {
    var input: [UInt8] = []
    input.reserveCapacity(1024)
    let fields = message.headerFields
    // The fields of each signed name, bottom first, found in one pass: searching the header once per
    // h= entry took minutes for a signature listing 100,000 names over a header of 100,000 fields.
    let wanted = Set(signedHeaders)
    var candidates: [String: [Int]] = [:]
    for index in fields.indices.reversed() where wanted.contains(fields[index].lowercasedName) {
        candidates[fields[index].lowercasedName, default: []].append(index)
    }
    var used: [String: Int] = [:]
    for name in signedHeaders {
        let skip = used[name, default: 0]
        used[name] = skip + 1
        if let indices = candidates[name], skip < indices.count {
            input += Canonicalization.header(fields[indices[skip]].raw, canonicalization)
        }
    }
    // The signature field itself, b= value removed, without its final CRLF.
    let raw = signatureField.rawWithoutTrailingCRLF
    let start = raw.startIndex
    var blanked = [UInt8]()
    blanked.reserveCapacity(raw.count)
    blanked += raw[start..<(start + signatureValueRange.lowerBound)]
    blanked += raw[(start + signatureValueRange.upperBound)...]
    switch canonicalization {
    case .simple: input += blanked
    case .relaxed: input += Canonicalization.relaxedHeaderWithoutCRLF(blanked[...])
    }
    return input
}
}

/// Parsed public keys by record text: parsing an RSA key costs more than verifying with it.
final class KeyCache: Sendable {
    private struct Entry: Sendable {
        /// The record text the key was parsed from: a name whose record changed is parsed again.
        var text: [UInt8]
        var key: PublicKey
        var record: KeyRecord
    }
    /// By key name. Looking up the short name and comparing the record's bytes costs less than
    /// hashing the whole record (a 2048-bit key is about 400 bytes) on every verification.
    private let entries = Mutex<[String: Entry]>([:])
    private let capacity = 1024

    /// Parses (or reuses) the key in `text` and checks it against `signature` (RFC 6376 §6.1.2 steps 5-9).
    /// The record's tags are checked before the key itself is parsed, so each problem gets its own code.
    func key(for text: [UInt8], name: String, signature: DKIMSignature) throws(DKIMError) -> (PublicKey, KeyRecord) {
        let cacheKey = name
        if let cached = entries.withLock({ entries -> Entry? in
            guard let entry = entries[cacheKey], entry.text == text else { return nil }
            return entry
        }) {
            try Self.check(cached.record, name: name, against: signature)
            return (cached.key, cached.record)
        }
        let record = try KeyRecord(parsing: text, name: name)
        try Self.check(record, name: name, against: signature)
        let key = try PublicKey(type: record.keyType, data: record.publicKeyData, name: name)
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[cacheKey] = Entry(text: text, key: key, record: record)
        }
        return (key, record)
    }

    private static func check(_ record: KeyRecord, name: String, against signature: DKIMSignature) throws(DKIMError) {
        guard !record.isRevoked else {
            throw DKIMError(code: .keyRevoked, reason: "the key at \(name) has been revoked (empty p=); sign with a current selector")
        }
        guard record.keyType == signature.algorithm.keyType else {
            throw DKIMError(code: .keyTypeMismatch, reason: "\(name) publishes a k=\(record.keyType.rawValue) key but the signature uses a=\(signature.algorithm.rawValue)")
        }
        if let hashes = record.acceptableHashes, !hashes.contains(signature.algorithm.hashName) {
            throw DKIMError(code: .keyHashNotAllowed, reason: "\(name) allows only h=\(hashes.joined(separator: ":")), not \(signature.algorithm.hashName)")
        }
        if let services = record.serviceTypes, !services.contains("*"), !services.contains("email") {
            throw DKIMError(code: .keyServiceMismatch, reason: "\(name) has s=\(services.joined(separator: ":")), which does not include email")
        }
        if record.isStrict {
            let identityDomain = signature.identity.split(separator: "@").last.map { $0.lowercased() } ?? ""
            guard identityDomain == signature.signingDomain else {
                throw DKIMError(code: .keyStrictIdentity, reason: "\(name) has t=s, so i= must use exactly \(signature.signingDomain), not a subdomain")
            }
        }
    }
}
