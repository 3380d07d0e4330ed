package import Foundation

/// A domain in the registry of trusted senders and sites (DESIGN.md: only registered domains are admitted), with
/// what proves its registrant controls it (a DNS challenge), its test mode and the hosts its links may point to.
///
/// The admission stage owns what the statuses mean and how they change (`DomainLifecycle`); the store only keeps
/// them.
package struct RegisteredDomain: Codable, Hashable, Sendable {
    package enum Status: String, Codable, Hashable, Sendable, CaseIterable {
        /// Registered, control of the domain not proved yet: not trusted (a development or test policy may admit it,
        /// saying so).
        case pending
        /// Its challenge record was found in DNS: the registrant controls the domain. Not approved for production.
        case verified
        /// Verified (or approved by an operator before proofs existed) and approved: trusted.
        case approved
        /// Was trusted, no longer is: an operator revoked it, or its challenge record was gone for several checks in a
        /// row (``Trust/suspension`` says which).
        case suspended
    }

    /// Lowercase, without a trailing dot.
    package var domain: String
    package var status: Status
    /// Who to reach about this sender (free text, for operators).
    package var contact: String?
    package var createdAt: Date
    package var updatedAt: Date
    /// Who made the latest change.
    package var updatedBy: String
    /// The proof of control, its checks, the suspension, the test mode and the extra hosts.
    package var trust: Trust

    package init(
        domain: String, status: Status, contact: String?, createdAt: Date, updatedAt: Date, updatedBy: String,
        trust: Trust = Trust()
    ) {
        self.domain = domain
        self.status = status
        self.contact = contact
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.updatedBy = updatedBy
        self.trust = trust
    }
}

extension RegisteredDomain {
    /// Everything about a registration beyond its status: kept by the store as one value, decided by admission.
    package struct Trust: Codable, Hashable, Sendable {
        /// The random token the registrant publishes at `_gateway-challenge.DOMAIN` as `gateway-verification=TOKEN`;
        /// nil for registrations made before proofs existed, until `register` runs again.
        package var challenge: String?
        /// When a lookup last found the challenge record; nil when it never has.
        package var verifiedAt: Date?
        /// The latest lookup of the challenge record.
        package var lastCheck: DomainCheck?
        /// Lookups in a row that found the record gone (a DNS failure counts neither way).
        package var missingChecks: Int
        /// Why the domain is suspended; nil unless it is.
        package var suspension: Suspension?
        /// Hosts (and their subdomains), besides the domain and its subdomains, that links in its markup may point to.
        package var hosts: [String]
        /// Markup admitted before approval for a few listed owners only; nil when off.
        package var testMode: TestMode?

        package init(
            challenge: String? = nil, verifiedAt: Date? = nil, lastCheck: DomainCheck? = nil, missingChecks: Int = 0,
            suspension: Suspension? = nil, hosts: [String] = [], testMode: TestMode? = nil
        ) {
            self.challenge = challenge
            self.verifiedAt = verifiedAt
            self.lastCheck = lastCheck
            self.missingChecks = missingChecks
            self.suspension = suspension
            self.hosts = hosts
            self.testMode = testMode
        }

        private enum CodingKeys: String, CodingKey {
            case challenge, verifiedAt, lastCheck, missingChecks, suspension, hosts, testMode
        }

        /// Every member may be missing (a registration from before proofs reads as `{}`).
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            challenge = try container.decodeIfPresent(String.self, forKey: .challenge)
            verifiedAt = try container.decodeIfPresent(Date.self, forKey: .verifiedAt)
            lastCheck = try container.decodeIfPresent(DomainCheck.self, forKey: .lastCheck)
            missingChecks = try container.decodeIfPresent(Int.self, forKey: .missingChecks) ?? 0
            suspension = try container.decodeIfPresent(Suspension.self, forKey: .suspension)
            hosts = try container.decodeIfPresent([String].self, forKey: .hosts) ?? []
            testMode = try container.decodeIfPresent(TestMode.self, forKey: .testMode)
        }
    }

    /// One lookup of a domain's challenge record.
    package struct DomainCheck: Codable, Hashable, Sendable {
        package enum Result: String, Codable, Hashable, Sendable {
            /// The record holds the domain's token.
            case found
            /// A definitive answer without the token: no such name, no TXT record, or other TXT records only.
            case missing
            /// No answer for now (timeout, SERVFAIL, REFUSED, network): says nothing about the record.
            case failed
        }

        package var at: Date
        package var result: Result
        /// Who answered (`127.0.0.1:53`, `zone file keys.zone`), or who was asked when nobody answered.
        package var nameserver: String
        /// The DNS code behind a missing or failed result (`dns.nxdomain`, `dns.timeout`).
        package var code: String?

        package init(at: Date, result: Result, nameserver: String, code: String? = nil) {
            self.at = at
            self.result = result
            self.nameserver = nameserver
            self.code = code
        }
    }

    /// Why a domain is suspended, and what it goes back to when the suspension is lifted.
    package struct Suspension: Codable, Hashable, Sendable {
        package enum Cause: String, Codable, Hashable, Sendable {
            /// An operator revoked it (`gateway domains revoke`): only an operator lifts it.
            case `operator`
            /// Its challenge record was gone for several checks in a row: the next check that finds it lifts it.
            case proofMissing = "proof-missing"
        }

        package var cause: Cause
        /// What happened, for people (the record's name, how many checks, who answered).
        package var reason: String
        /// The status it had; a check that finds the record again restores it.
        package var previousStatus: Status

        package init(cause: Cause, reason: String, previousStatus: Status) {
            self.cause = cause
            self.reason = reason
            self.previousStatus = previousStatus
        }
    }

    /// A domain's test mode: until ``until``, its markup is admitted before approval for ``owners`` only.
    package struct TestMode: Codable, Hashable, Sendable {
        package var owners: [OwnerAddress]
        package var until: Date
        package var setBy: String

        package init(owners: [OwnerAddress], until: Date, setBy: String) {
            self.owners = owners
            self.until = until
            self.setBy = setBy
        }

        /// Whether it is on at `instant`.
        package func isActive(at instant: Date) -> Bool { instant < until }
    }
}

extension RegisteredDomain.Trust {
    /// How the store writes it: JSON with sorted keys and times in whole milliseconds, the same on every backend.
    package func encoded() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(StoreTime.milliseconds(date))
        }
        do {
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        } catch {
            throw StoreError(code: .invalidArgument, reason: "a registration's trust state could not be encoded: \(error)")
        }
    }

    /// Reads what ``encoded()`` wrote; `store.corrupt` when it cannot.
    package static func decoded(_ text: String) throws -> Self {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            StoreTime.date(try decoder.singleValueContainer().decode(Int64.self))
        }
        do {
            return try decoder.decode(Self.self, from: Data(text.utf8))
        } catch {
            throw StoreError(
                code: .corrupt, reason: "a registration's trust state is not readable; upgrade the gateway or restore the database")
        }
    }
}
