package import Foundation
package import MailMessage

/// Signs messages (RFC 6376 §5), for senders testing their markup and for test fixtures.
package struct DKIMSigner: Sendable {
    package struct Configuration: Sendable {
        /// `d=`.
        package var signingDomain: String
        /// `s=`.
        package var selector: String
        package var headerCanonicalization: DKIMSignature.Canonicalization = .relaxed
        package var bodyCanonicalization: DKIMSignature.Canonicalization = .relaxed
        /// The fields to sign, lower-cased; nil signs those of `defaultHeaders` present in the message.
        package var headers: [String]? = nil
        /// Sign one more `From` than present, so a second From cannot be added (RFC 6376 §8.15).
        package var overSignFrom = true
        /// `i=`, if any.
        package var identity: String? = nil
        /// Adds `x=` this long after `t=`.
        package var expiresAfter: TimeInterval? = nil
        /// Adds `l=` with the canonicalized body length (not recommended; for tests of `l=` handling).
        package var includeBodyLength = false
        package var now: @Sendable () -> Date = { Date() }

        package init(signingDomain: String, selector: String) {
            self.signingDomain = signingDomain
            self.selector = selector
        }
    }

    /// The fields signed by default when the message has them (RFC 6376 §5.4.1's recommendations).
    package static let defaultHeaders = [
        "from", "reply-to", "subject", "date", "to", "cc", "message-id", "in-reply-to", "references",
        "mime-version", "content-type", "content-transfer-encoding",
    ]

    package let configuration: Configuration
    private let key: PrivateKey

    package init(key: PrivateKey, configuration: Configuration) {
        self.key = key
        self.configuration = configuration
    }

    /// The `DKIM-Signature` field for `message`, folded, ending in CRLF: prepend it to the message.
    package func signatureField(for message: RawMessage) throws(DKIMError) -> String {
        let c = configuration
        guard message.headerFields.contains(where: { $0.lowercasedName == "from" }) else {
            throw DKIMError(code: .messageInvalid, reason: "the message has no From field; DKIM requires From to be signed")
        }
        var headers = c.headers?.map { $0.lowercased() } ?? []
        if c.headers == nil {
            for name in Self.defaultHeaders {
                let count = message.headerFields.filter { $0.lowercasedName == name }.count
                headers += Array(repeating: name, count: count)
            }
        }
        if !headers.contains("from") { headers.insert("from", at: 0) }
        if c.overSignFrom { headers.append("from") }

        let limit: Int? = nil
        let bodyHash = try Canonicalization.bodyHash(message.body, c.bodyCanonicalization, limit: limit)
        let algorithm: DKIMSignature.Algorithm = key.type == .rsa ? .rsaSHA256 : .ed25519SHA256
        let timestamp = Int(c.now().timeIntervalSince1970)

        var tags: [String] = [
            "v=1", "a=\(algorithm.rawValue)", "c=\(c.headerCanonicalization.rawValue)/\(c.bodyCanonicalization.rawValue)",
            "d=\(c.signingDomain)", "s=\(c.selector)",
        ]
        if let identity = c.identity { tags.append("i=\(identity)") }
        tags.append("t=\(timestamp)")
        if let expiresAfter = c.expiresAfter { tags.append("x=\(timestamp + Int(expiresAfter))") }
        if c.includeBodyLength { tags.append("l=\(bodyHash.canonicalLength)") }
        tags.append("h=\(headers.joined(separator: ":"))")
        tags.append("bh=\(Data(bodyHash.digest).base64EncodedString())")

        // Fold between tags so no line passes 78 characters where avoidable (RFC 5322 §2.1.1).
        var field = "DKIM-Signature:"
        var lineLength = field.count
        for tag in tags {
            let piece = " " + tag + ";"
            if lineLength + piece.count > 76 {
                field += "\r\n\t" + tag + ";"
                lineLength = 8 + tag.count + 1
            } else {
                field += piece
                lineLength += piece.count
            }
        }
        field += "\r\n\tb="

        // Sign the field as it will appear with an empty b= (RFC 6376 §3.7).
        let unsigned = Array((field + "\r\n").utf8)
        let probe = try Self.appending(unsigned, to: message)
        let signatureIndex = 0
        let signatureField = probe.headerFields[signatureIndex]
        let bOffset = signatureField.rawWithoutTrailingCRLF.count
        let input = Canonicalization.headerHashInput(
            signedHeaders: headers,
            canonicalization: c.headerCanonicalization,
            signatureField: signatureField,
            signatureValueRange: bOffset..<bOffset,
            in: probe
        )
        let signature = Data(try key.sign(input)).base64EncodedString()
        var folded = ""
        var rest = Substring(signature)
        var first = true
        while !rest.isEmpty {
            let width = first ? 70 : 74
            if !first { folded += "\r\n\t " }
            folded += rest.prefix(width)
            rest = rest.dropFirst(width)
            first = false
        }
        return field + folded + "\r\n"
    }

    /// `message` with a fresh signature prepended.
    package func sign(_ message: RawMessage) throws(DKIMError) -> [UInt8] {
        let field = try signatureField(for: message)
        return Array(field.utf8) + message.bytes
    }

    private static func appending(_ field: [UInt8], to message: RawMessage) throws(DKIMError) -> RawMessage {
        do {
            return try RawMessage(bytes: field + message.bytes)
        } catch {
            throw DKIMError(code: .messageInvalid, reason: error.reason)
        }
    }
}
