internal import Admission
internal import DKIM
import Foundation
import Markup
package import Reservations
package import Store

/// What a dry run found beyond the verdict, for a sender fixing a confirmation (issue 20): each DKIM signature,
/// alignment, the registry entry, and what each developer flag would change. The one copy the command line
/// (`gateway check --json`), the API (`POST /v1/check/messages`, `/v1/check/pages`) and the console's tester show.
package struct CheckDetails: Codable, Sendable, Hashable {
    /// One DKIM-Signature field's verdict (RFC 6376 §6, results in RFC 8601 §2.7.1 terms).
    package struct Signature: Codable, Sendable, Hashable {
        /// `d=`.
        package var domain: String?
        /// `s=`.
        package var selector: String?
        /// `a=` as written.
        package var algorithm: String?
        package var keyBits: Int?
        /// pass, fail, neutral, policy, temperror, permerror.
        package var result: String
        /// The refusal's code (`dkim.body-hash-mismatch`); nil when it passed.
        package var code: String?
        package var reason: String
        /// True when `d=` shares the From address's organizational domain (RFC 7489 §3.1.1, relaxed).
        package var aligned: Bool
        /// `l=`: the signature covers only this many body bytes.
        package var bodyLengthLimit: Int?

        init(_ result: DKIMSignatureResult, aligned: Bool) {
            domain = result.signingDomain
            selector = result.selector
            algorithm = result.algorithm
            keyBits = result.keyBits
            self.result = result.result.rawValue
            code = result.code?.description
            reason = result.reason
            self.aligned = aligned
            bodyLengthLimit = result.bodyLengthLimit
        }
    }

    /// What DKIM proves about an email.
    package struct Authentication: Codable, Sendable, Hashable {
        /// The single From address; nil when there is none or several.
        package var from: String?
        package var fromDomain: String?
        package var organizationalDomain: String?
        /// Every signature, top first.
        package var signatures: [Signature]
        /// The `d=` of the first passing aligned signature: the one admission relies on.
        package var alignedDomain: String?
        /// The To and Cc addresses that signature covers: the owners by default.
        package var signedRecipients: [String]
    }

    /// The registry entry covering the source domain.
    package struct Registration: Codable, Sendable, Hashable {
        /// The registered domain (the source domain or a parent of it); nil when none is registered.
        package var domain: String?
        /// pending, verified, approved, suspended, or not-registered.
        package var status: String
    }

    /// The decision the same document would get with more developer flags on.
    package struct FlagOutcome: Codable, Sendable, Hashable {
        /// The flags added to those in force.
        package var flags: [String]
        package var verdict: DecisionLogEntry.Verdict
        /// The codes that would remain: the message's, then each refused item's.
        package var codes: [String]
        /// How many reservations would be admissible.
        package var admissible: Int
        /// True when the verdict, the codes and the count are what they are now.
        package var unchanged: Bool
    }

    /// The refusals of the document as a whole, each with where it is and what to do (an item's own problems carry
    /// their property paths in ``ItemDetails``).
    package var refusals: [Refusal]
    package var authentication: Authentication?
    package var registration: Registration?
    /// The developer flags on when the check ran.
    package var flagsOn: [String]
    /// One outcome per set of flags not yet on (each alone, then all together); empty when a page could not be
    /// fetched (a fetch refusal is decided before the markup; check again with the flag on to see past it).
    package var underFlags: [FlagOutcome]
}

/// A dry run's details of one reservation: its card, every diagnostic with its property path, and the bars it
/// meets.
package struct ItemDetails: Codable, Sendable, Hashable {
    /// One problem with the item's markup.
    package struct Problem: Codable, Sendable, Hashable {
        /// warning or error.
        package var severity: String
        package var code: String
        /// The property path (`reservationFor.departureAirport.iataCode`); empty for the whole item.
        package var path: String
        package var message: String
    }

    /// Nil for a reservation type the gateway does not handle.
    package var card: ReservationCard?
    package var problems: [Problem]
    /// Apple's and Gmail's published required properties.
    package var requirements: [PublishedRequirement]

    init(_ resolution: Resolution) {
        card = resolution.reservation.map { ReservationCard($0, normalized: resolution.normalized) }
        problems = resolution.diagnostics.map {
            Problem(severity: $0.severity.rawValue, code: $0.code.rawValue, path: $0.path, message: $0.message)
        }
        requirements = resolution.publishedRequirements
    }
}

extension CheckDetails {
    /// The details of an email's check.
    static func email(
        _ authentication: EmailAuthentication, registration: RegisteredDomain?, flags: ActiveFlags,
        decide: (ActiveFlags) -> AdmissionDecision
    ) -> CheckDetails {
        let aligned = Set(authentication.alignedSignatures)
        let signatures = authentication.verification.signatures.map { Signature($0, aligned: aligned.contains($0)) }
        return CheckDetails(
            refusals: refusals(decide(flags).codes, authentication),
            authentication: Authentication(
                from: authentication.fromAddress, fromDomain: authentication.fromDomain?.ascii,
                organizationalDomain: authentication.organizationalDomain?.ascii, signatures: signatures,
                alignedDomain: authentication.alignedSignature?.signingDomain,
                signedRecipients: authentication.signedRecipients.map(\.address)),
            registration: authentication.fromDomain.map { _ in Registration(registration) },
            flagsOn: flags.flags.map(\.rawValue).sorted(), underFlags: outcomes(flags: flags, decide: decide))
    }

    /// The details of a fetched page's check.
    /// - Parameter refusal: why the page was not fetched (the fetch error's code and reason), or nil.
    static func page(
        _ url: String, registration: RegisteredDomain?, flags: ActiveFlags,
        refusal: (code: String, reason: String)? = nil, decide: ((ActiveFlags) -> AdmissionDecision)?
    ) -> CheckDetails {
        var refusals = refusal.map { [Refusal(code: $0.code, at: url, hint: $0.reason)] } ?? []
        if let decision = decide?(flags) {
            refusals += decision.codes.map { code in
                Refusal(
                    code: code, at: url,
                    hint: code.hasPrefix("registry.")
                        ? "register the page's domain, or its parent, with the gateway"
                        : code == "web.not-verified" ? "serve the page over HTTPS with a certificate that validates"
                        : code == "markup.no-reservations" ? "add schema.org reservation markup to the page"
                        : "see the code's description in the README")
            }
        }
        return CheckDetails(
            refusals: refusals, authentication: nil, registration: Registration(registration),
            flagsOn: flags.flags.map(\.rawValue).sorted(),
            underFlags: decide.map { outcomes(flags: flags, decide: $0) } ?? [])
    }

    /// Each flag not on, alone, then all of them together when more than one is off.
    static func outcomes(flags: ActiveFlags, decide: (ActiveFlags) -> AdmissionDecision) -> [FlagOutcome] {
        let off = DeveloperFlag.allCases.filter { !flags.contains($0) }
        var sets = off.map { [$0] }
        if off.count > 1 { sets.append(off) }
        let now = summary(decide(flags))
        return sets.map { added in
            let outcome = summary(decide(ActiveFlags(flags.flags.union(added))))
            return FlagOutcome(
                flags: added.map(\.rawValue), verdict: outcome.verdict, codes: outcome.codes,
                admissible: outcome.admissible, unchanged: outcome == now)
        }
    }

    private struct Summary: Equatable {
        var verdict: DecisionLogEntry.Verdict
        var codes: [String]
        var admissible: Int
    }

    private static func summary(_ decision: AdmissionDecision) -> Summary {
        let codes = AdmissionDecision.unique(decision.codes + decision.items.flatMap(\.codes))
        return Summary(
            verdict: decision.verdict, codes: codes, admissible: decision.items.filter { $0.codes.isEmpty }.count)
    }
}

extension CheckDetails.Registration {
    init(_ entry: RegisteredDomain?) {
        domain = entry?.domain
        status = entry?.status.rawValue ?? "not-registered"
    }
}
