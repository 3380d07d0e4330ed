package import DKIM
package import Foundation
package import MailMessage
package import Store

/// What DKIM proves about an email, in the terms admission needs: who it is from, whether a
/// signature from that sender's organization passed, and which recipients it vouches for.
package struct EmailAuthentication: Sendable {
    /// The single From address; nil when the message has none or several (RFC 5322 §3.6.2).
    package var fromAddress: String?
    package var fromDomain: DomainName?
    /// The From domain's organizational domain (RFC 7489 §3.2).
    package var organizationalDomain: DomainName?
    package var verification: DKIMVerification
    /// The first passing signature whose `d=` shares the From's organizational domain.
    package var alignedSignature: DKIMSignatureResult?
    /// Every signature whose `d=` shares the From's organizational domain, whatever its result, top first.
    package var alignedSignatures: [DKIMSignatureResult] = []
    /// Signatures from the From's organization that could not pass yet (DNS trouble): the message is deferred.
    package var alignedTemporaryFailure: DKIMSignatureResult?
    /// Addresses in the To and Cc fields that the aligned signature covers.
    package var signedRecipients: [OwnerAddress]
    /// Addresses in To and Cc, signed or not.
    package var recipients: [OwnerAddress]
    /// When the sender wrote the message, as far as the aligned signature vouches: the `Date:` field when the
    /// signature covers it (and it is not in the future), else the signature's `t=`; nil without an aligned passing
    /// signature. What orders the versions this message stores (issue 13), unless the markup has `modifiedTime`.
    package var senderTime: SenderTime?
    /// The Message-ID, for the decision log.
    package var messageID: String?

    /// - Parameters:
    ///   - now: The verifier's clock; a signed `Date:` later than `now` plus `clockSkew` is not taken as the sender's
    ///     time (a wrong clock would make every later message stale), the signature's `t=` is.
    package init(
        message: RawMessage, verification: DKIMVerification, publicSuffixes: PublicSuffixList, now: Date = Date(),
        clockSkew: TimeInterval = 300
    ) {
        self.verification = verification
        messageID = message.value(of: "Message-ID")
        let from = message.from
        if from.count == 1, let domain = try? DomainName(normalizing: from[0].domain) {
            fromAddress = from[0].address.lowercased()
            fromDomain = domain
            organizationalDomain = publicSuffixes.organizationalDomain(of: domain)
        }
        recipients = message.recipients(in: ["to", "cc"]).compactMap { OwnerAddress($0.address) }
        signedRecipients = []
        guard let organization = organizationalDomain else { return }
        func aligned(_ signature: DKIMSignatureResult) -> Bool {
            guard let d = signature.signingDomain, let domain = try? DomainName(normalizing: d) else { return false }
            return publicSuffixes.organizationalDomain(of: domain) == organization
        }
        alignedSignatures = verification.signatures.filter(aligned)
        alignedSignature = alignedSignatures.first { $0.result == .pass }
        alignedTemporaryFailure = alignedSignatures.first { $0.result == .temperror }
        if let signature = alignedSignature {
            signedRecipients = Self.signedAddresses(in: message, signedHeaders: signature.signedHeaders)
            senderTime = Self.senderTime(of: message, signedBy: signature, notAfter: now.addingTimeInterval(clockSkew))
        }
    }

    /// The To/Cc fields a signature covers: `h=` takes fields of a name from the bottom up, as many
    /// as it lists (RFC 6376 §5.4.2).
    static func signedAddresses(in message: RawMessage, signedHeaders: [String]) -> [OwnerAddress] {
        var addresses: [OwnerAddress] = []
        for name in ["to", "cc"] {
            let listed = signedHeaders.filter { $0 == name }.count
            let fields = message.fields(named: name)
            for field in fields.suffix(listed) {
                addresses += MailAddress.list(in: field).compactMap { OwnerAddress($0.address) }
            }
        }
        return addresses
    }

    /// The sender's time `signature` vouches for: the one `Date:` field when `h=` covers it (RFC 6376 §5.4; with
    /// several Date fields none is trusted), else `t=` (RFC 6376 §3.5).
    static func senderTime(of message: RawMessage, signedBy signature: DKIMSignatureResult, notAfter latest: Date)
        -> SenderTime?
    {
        let dates = message.fields(named: "date")
        if dates.count == 1, signature.signedHeaders.contains("date"),
            let date = MessageDate.parse(dates[0].unfoldedValue), date <= latest
        {
            return SenderTime(date, source: .messageDate)
        }
        return signature.timestamp.map { SenderTime($0, source: .signatureTime) }
    }
}
