import DKIM
package import Foundation
import Markup
package import Reservations
package import Store

/// The admit stage (DESIGN.md): given what authentication proved, what extraction and resolution
/// found, the registry, the flags and the policy, decide what enters the store and why.
/// Pure: no I/O, so every rule is tested directly.
package struct AdmissionDecision: Sendable {
    /// Where the markup came from and what proves it.
    package enum Source: Sendable {
        case email(EmailAuthentication)
        /// A page the gateway fetched itself; `verified` is true when it came over HTTPS with a valid certificate.
        case web(host: DomainName, finalURL: String, verified: Bool)
    }

    /// What happened to one reservation item.
    package struct Item: Sendable {
        package var resolution: Resolution
        package var itemReference: String
        /// What goes to the store, one per owner; empty when the item was refused.
        package var admitted: [IncomingReservation]
        /// Why it was refused; empty when admitted.
        package var codes: [String]
    }

    package var verdict: DecisionLogEntry.Verdict
    /// Why, for the message as a whole (item codes are on each item).
    package var codes: [String]
    package var sourceDomain: DomainName?
    /// The developer flags this decision relied on: named in the log and on each stored reservation.
    package var flagsUsed: [DeveloperFlag]
    /// What else it relied on, named beside the flags: `unapproved-domain` (a policy that admits domains not approved
    /// yet), `test-mode` (the domain's test mode, for its listed owners).
    package var marks: [String]
    package var owners: [OwnerAddress]
    package var items: [Item]

    /// Decides.
    /// - Parameters:
    ///   - owners: the owners given (`--owner`, LMTP RCPT TO); empty means the signed To and Cc addresses.
    ///   - registration: the registry entry covering the source domain, if any.
    ///   - markupInUnsignedTail: true when the part of the body outside `l=` holds markup.
    ///   - listsEveryReservation: false when a limit cut the document's reservations short: then no booking in it is
    ///     listed whole, and nothing stored is superseded.
    ///   - requireOwner: false for a dry run, which decides without an owner and stores nothing.
    ///   - documentTime: when the document says it was written, for a page (its `dateModified`, else the fetch
    ///     time); an email's comes from its authentication (``EmailAuthentication/senderTime``). The reservation's
    ///     own `modifiedTime` wins over both.
    ///   - organizationalDomain: the sender's organizational domain, whose hosts links may point to; an email's comes
    ///     from its authentication, a page's must be given (else only the page's host and below).
    ///   - now: the instant a test mode's expiry is compared with.
    package init(
        source: Source,
        resolutions: [Resolution],
        owners givenOwners: [OwnerAddress],
        registration: RegisteredDomain?,
        flags: ActiveFlags,
        policy: Policy,
        markupInUnsignedTail: Bool = false,
        listsEveryReservation: Bool = true,
        requireOwner: Bool = true,
        documentTime: SenderTime? = nil,
        organizationalDomain: DomainName? = nil,
        now: Date = Date(),
        sourceDescription: String
    ) {
        var codes: [String] = []
        var flagsUsed: [DeveloperFlag] = []
        var marks: [String] = []
        var testOwners: Set<OwnerAddress>? = nil
        var linkDomain = organizationalDomain
        var deferred = false
        var owners = givenOwners
        var senderTime = documentTime
        var ownersMustBeSigned = policy.ownership.requireSignedRecipient && !givenOwners.isEmpty
        var sourceDomain: DomainName? = nil

        // 1. Authentication.
        switch source {
        case .email(let authentication):
            sourceDomain = authentication.fromDomain
            linkDomain = linkDomain ?? authentication.organizationalDomain
            senderTime = senderTime ?? authentication.senderTime
            if authentication.fromDomain == nil {
                codes.append("admission.from-invalid")
            } else if let signature = authentication.alignedSignature {
                if signature.hasUnsignedTail {
                    switch policy.dkim.bodyLength {
                    case .refuse: codes.append("admission.body-length-partial")
                    case .refuseMarkupInUnsignedTail where markupInUnsignedTail: codes.append("admission.markup-in-unsigned-tail")
                    default: break
                    }
                }
                if owners.isEmpty { owners = authentication.signedRecipients }
            } else if flags.contains(.allowUnverifiedSources) {
                // The flag skips DKIM and nothing else: with no signature to say which recipients it covers, the
                // owners are still held to the message's own To and Cc (checked in 3.), never any address given.
                flagsUsed.append(.allowUnverifiedSources)
                if owners.isEmpty { owners = authentication.recipients }
            } else if let temporary = authentication.alignedTemporaryFailure {
                deferred = true
                codes.append(temporary.code?.description ?? "dkim.temperror")
            } else {
                codes += Self.dkimRefusal(authentication)
            }
        case .web(let host, _, let verified):
            sourceDomain = host
            ownersMustBeSigned = false
            if !verified {
                if flags.contains(.allowUnverifiedSources) {
                    flagsUsed.append(.allowUnverifiedSources)
                } else {
                    codes.append("web.not-verified")
                }
            }
        }

        // 2. The registry: the source's domain, or a parent of it, registered and approved; before approval, a
        //    verified domain's test mode admits for its listed owners only (checked in 3.), and a development or test
        //    policy may admit pending and verified domains, saying so.
        if sourceDomain != nil && codes.isEmpty && !deferred {
            let status = registration?.status
            if status == .approved {
                // Trusted.
            } else if status == .verified, let test = registration?.trust.testMode, test.isActive(at: now) {
                testOwners = Set(test.owners)
                marks.append(Self.testModeMark)
            } else if status == .pending || status == .verified, policy.registration.admitUnapproved {
                marks.append(Self.unapprovedDomainMark)
            } else if flags.contains(.allowAnyDomain) {
                flagsUsed.append(.allowAnyDomain)
            } else {
                codes.append(Self.registryRefusal(status))
            }
        }

        // 3. The owner: by default each signed recipient; a given owner must be one of them.
        if codes.isEmpty && !deferred {
            if owners.isEmpty {
                // A dry run (`gateway check URL`) may decide without an owner; storing may not.
                if requireOwner { codes.append("admission.no-owner") }
            } else if ownersMustBeSigned, case .email(let authentication) = source {
                // Under allow-unverified-sources (no aligned signature passed) the To and Cc stand in for the
                // signed recipients: the flag loosens DKIM, not this rule.
                let unverified = authentication.alignedSignature == nil && flagsUsed.contains(.allowUnverifiedSources)
                let signed = Set(unverified ? authentication.recipients : authentication.signedRecipients)
                if owners.contains(where: { !signed.contains($0) }) { codes.append("admission.recipient-not-signed") }
            }
            if let testOwners, codes.isEmpty, owners.contains(where: { !testOwners.contains($0) }) {
                codes.append("registry.test-mode-owner-not-listed")
                marks.removeAll { $0 == Self.testModeMark }  // it admitted nothing
            }
        }
        if resolutions.isEmpty && codes.isEmpty && !deferred { codes.append("markup.no-reservations") }

        // 4. The items.
        let accepted = Set(policy.acceptedKinds)
        let flagNames = flagsUsed.map(\.rawValue) + marks
        // The store keys a reservation by the registered domain that vouched for it, not the exact
        // From or host name: a registration covers its subdomains, and senders confirm from one
        // (mail.x) and change or cancel from another (x), which must reach the same record.
        let vouchingDomain = registration?.status == .approved || !marks.isEmpty ? registration?.domain : nil
        let links = (linkDomain ?? sourceDomain).map { LinkPolicy(organizationalDomain: $0, hosts: registration?.trust.hosts ?? []) }
        let sourceRefusal = codes
        // A booking the document evidently lists whole (and not cut short by a limit) supersedes its stored parts it
        // no longer lists (MARKUP.md, "Re-bookings").
        var wholeBookings: [String: BookingParts] = [:]
        if listsEveryReservation {
            for listing in BookingListing.listings(of: resolutions) where listing.listsWholeBooking {
                wholeBookings[listing.containerReference] = BookingParts(
                    itemReferences: listing.parts.map(\.itemReference), passengers: listing.passengers,
                    parts: resolutions.compactMap(\.reservation)
                        .filter { $0.containerReference == listing.containerReference }.compactMap(PartIdentity.init))
            }
        }
        let items: [Item] = resolutions.map { original in
            // Links the policy does not keep leave the markup here, before anything is stored or reported.
            let (resolution, linkWarnings) = links?.apply(to: original) ?? (original, [])
            let reference = resolution.reservation?.itemReference ?? resolution.reservation?.reservationId ?? "?"
            var itemCodes = sourceRefusal
            if deferred { itemCodes.append("admission.deferred") }
            if itemCodes.isEmpty {
                if !resolution.admissible || resolution.reservation == nil {
                    itemCodes = resolution.diagnostics.filter { $0.severity == .error }.map(\.code.rawValue)
                    if itemCodes.isEmpty { itemCodes = ["markup.not-admissible"] }
                } else if let kind = resolution.reservation?.kind, !accepted.contains(kind.rawValue) {
                    itemCodes = ["admission.kind-not-accepted"]
                }
            }
            guard itemCodes.isEmpty, let reservation = resolution.reservation, let domain = sourceDomain else {
                return Item(resolution: resolution, itemReference: reference, admitted: [], codes: Self.unique(itemCodes))
            }
            let warnings = linkWarnings.map { StoredPayload.Warning(code: $0.code.rawValue, path: $0.path) }
            let incoming = owners.map { owner in
                IncomingReservation(
                    admitted: reservation, normalized: resolution.normalized, owner: owner,
                    sourceDomain: vouchingDomain ?? domain.ascii, senderTime: senderTime, flags: flagNames,
                    source: sourceDescription, warnings: warnings,
                    bookingParts: reservation.containerReference.flatMap { wholeBookings[$0] })
            }
            return Item(resolution: resolution, itemReference: reference, admitted: incoming, codes: [])
        }

        self.codes = Self.unique(codes)
        self.sourceDomain = sourceDomain
        self.flagsUsed = flagsUsed
        self.marks = marks
        self.owners = owners
        self.items = items
        if deferred {
            verdict = .deferred
        } else if !codes.isEmpty {
            verdict = .rejected
        } else {
            let admittedCount = items.filter { $0.codes.isEmpty }.count
            verdict = admittedCount == items.count ? .admitted : admittedCount == 0 ? .rejected : .partial
        }
    }

    /// Named beside the flags when a policy admitted a domain that is not approved (pending or verified).
    package static let unapprovedDomainMark = "unapproved-domain"
    /// Named beside the flags when a domain's test mode admitted markup for a listed owner.
    package static let testModeMark = "test-mode"

    /// Why the registry refuses a source whose registration has `status` (nil: none covers it).
    static func registryRefusal(_ status: RegisteredDomain.Status?) -> String {
        switch status {
        case nil: AdmissionError.Code.domainNotRegistered.description
        case .pending?: AdmissionError.Code.domainNotVerified.description
        case .verified?: AdmissionError.Code.domainNotApproved.description
        case .suspended?: AdmissionError.Code.domainSuspended.description
        case .approved?: ""
        }
    }

    /// Why an email without an aligned passing signature is refused.
    static func dkimRefusal(_ authentication: EmailAuthentication) -> [String] {
        let signatures = authentication.verification.signatures
        guard !signatures.isEmpty else { return ["admission.unsigned"] }
        if signatures.contains(where: { $0.result == .pass }) { return ["admission.signature-not-aligned"] }
        // The sender's own signature says most about what to fix; a relay's is the fallback.
        let ownSignature = authentication.alignedSignatures.first ?? signatures[0]
        return ["admission.dkim-failed"] + (ownSignature.code.map { [$0.description] } ?? [])
    }

    package static func unique(_ codes: [String]) -> [String] {
        var seen = Set<String>()
        return codes.filter { seen.insert($0).inserted }
    }
}
