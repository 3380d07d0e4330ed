import Foundation
import Yams

/// How strict the gateway is: limits, what it accepts, and what developers may loosen.
/// Read from `policies/NAME.yaml`; every field has a default, so a policy names only what it changes.
package struct Policy: Codable, Sendable, Hashable {
    /// What to do when a DKIM signature's `l=` leaves part of the body unsigned (RFC 6376 §8.2).
    package enum BodyLengthHandling: String, Codable, Sendable, Hashable {
        /// Refuse the signature when the unsigned tail holds markup; take markup only from the signed part otherwise.
        case refuseMarkupInUnsignedTail = "refuse-markup-in-unsigned-tail"
        /// Take markup only from the signed part and ignore the tail.
        case ignoreUnsignedTail = "ignore-unsigned-tail"
        /// Refuse any signature with `l=` shorter than the body.
        case refuse
    }

    package struct Registration: Codable, Sendable, Hashable {
        /// Approve a domain as soon as it is registered (development); otherwise it waits for `approve`.
        package var approveOnRegister = false
        /// Approve only a domain whose registrant proved control of it (its challenge record found in DNS): the
        /// production policy. Cannot go with `approveOnRegister`.
        package var requireProof = false
        /// Admit markup from `pending` and `verified` domains, each admission marked `unapproved-domain` in the
        /// decision log and on the reservation (development and test policies).
        package var admitUnapproved = false
        /// Anyone may register a domain through `POST /v1/domains` without a token: it starts `pending`, with a sender
        /// token that can do nothing but prove control until the proof passes.
        package var open = false
    }

    /// How the proofs of domain control are checked again (issue 15).
    package struct Verification: Codable, Sendable, Hashable {
        /// How often the cluster looks up every proved domain's challenge record again (once, on one node).
        package var recheckIntervalSeconds: Double = 86_400
        /// Lookups in a row that find the record gone before the domain is suspended (a DNS failure counts neither way).
        package var missingChecksBeforeSuspension = 3
    }

    /// A domain's test mode: its markup admitted before approval, for a few listed owners only.
    package struct TestMode: Codable, Sendable, Hashable {
        /// Whether senders and operators may turn it on.
        package var mayEnable = true
        /// How long it stays on when no duration is given, in seconds.
        package var defaultDurationSeconds: Double = 24 * 3600
        /// The longest it may stay on, in seconds.
        package var maximumDurationSeconds: Double = 7 * 24 * 3600
        /// The most owners it may list.
        package var maximumOwners = 10
    }

    /// One quota: at most `limit` in each window of `seconds` (0: no limit).
    package struct QuotaLimit: Codable, Sendable, Hashable {
        package var limit = 0
        package var seconds: Double

        package init(limit: Int = 0, seconds: Double) {
            self.limit = limit
            self.seconds = seconds
        }
    }

    /// The quotas of one scope (a sender domain, an owner).
    package struct QuotaLimits: Codable, Sendable, Hashable {
        /// Messages (emails and pages) submitted, by default per minute.
        package var messages = QuotaLimit(seconds: 60)
        /// Reservations admitted (created, updated, cancelled), by default per day.
        package var reservations = QuotaLimit(seconds: 86_400)
        /// Bytes of messages submitted, by default per day.
        package var bytes = QuotaLimit(seconds: 86_400)

        /// True when no quota is set.
        package var isUnlimited: Bool { messages.limit == 0 && reservations.limit == 0 && bytes.limit == 0 }
    }

    /// Quotas per sender domain and per owner, counted across the cluster in the store (issue 15).
    package struct Quotas: Codable, Sendable, Hashable {
        package var domain = QuotaLimits()
        package var owner = QuotaLimits()
    }

    package struct Flags: Codable, Sendable, Hashable {
        /// Whether the developer flags may be turned on at all.
        package var mayEnable = true
        /// How long a flag stays on when no `--for` is given, in seconds.
        package var defaultDurationSeconds: Double = 24 * 3600
        /// The longest a flag may stay on, in seconds.
        package var maximumDurationSeconds: Double = 7 * 24 * 3600
    }

    package struct Limits: Codable, Sendable, Hashable {
        /// Larger messages are refused (LMTP 552, HTTP 413). 32 MiB: a gateway behind an MX takes what the MX takes
        /// (25 MB is common), and mail without markup costs only the prefilter whatever its size.
        package var maxMessageBytes = 32 * 1024 * 1024
        package var maxPageBytes = 5 * 1024 * 1024
        package var maxReservationsPerDocument = 200
        package var maxJSONDepth = 64
        package var maxStringLength = 100 * 1024
    }

    package struct DKIM: Codable, Sendable, Hashable {
        package var clockSkewSeconds: Double = 300
        package var minimumRSAKeyBits = 1024
        package var bodyLength = BodyLengthHandling.refuseMarkupInUnsignedTail
    }

    package struct Ownership: Codable, Sendable, Hashable {
        /// The owner must be an address in a signed To or Cc field (DESIGN.md "Owner and replay").
        package var requireSignedRecipient = true
    }

    package struct Web: Codable, Sendable, Hashable {
        /// Extra CA bundles (PEM) trusted besides the system store, relative to the policy file.
        package var trustBundles: [String] = []
        /// Host name → IP address, consulted before DNS (like /etc/hosts).
        package var hosts: [String: String] = [:]
        /// Loopback addresses may be fetched (for a local test site only).
        package var allowLoopback = false
        /// Private, link-local and unique-local addresses may be fetched.
        package var allowPrivateAddresses = false
        package var maxRedirects = 5
        package var firstByteTimeoutSeconds: Double = 10
        package var totalTimeoutSeconds: Double = 30
    }

    package struct Sandbox: Codable, Sendable, Hashable {
        /// Parse untrusted markup in confined worker processes; `false` parses in-process (debugging only).
        package var enabled = true
        /// Whether this policy lets `enabled` be false.
        package var mayDisable = true
        package var documentTimeoutSeconds: Double = 5
        package var workerMemoryBytes = 1024 * 1024 * 1024
    }

    /// How long what the gateway holds about people is kept (issue 16), enforced by a sweep that runs once across
    /// the nodes. 0 keeps that kind of row forever.
    package struct Retention: Codable, Sendable, Hashable {
        /// Days after a reservation ends (its end, else its start) before it is removed with its history.
        package var reservationsAfterEndDays: Double = 30
        /// Days a decision-log entry is kept.
        package var decisionLogDays: Double = 30
        /// Days a message waits in the spool for a decision before it is dropped (as an MTA gives up after 5 days).
        package var spooledMessagesDays: Double = 5
        /// How often the sweep runs, in seconds.
        package var sweepIntervalSeconds: Double = 3600
    }

    package var name = "custom"
    package var description = ""
    package var registration = Registration()
    package var flags = Flags()
    package var limits = Limits()
    package var dkim = DKIM()
    package var ownership = Ownership()
    /// Reservation kinds admitted (restaurant, flight, lodging, rentalCar, train, bus, boat, event).
    package var acceptedKinds = ["restaurant", "flight", "lodging", "rentalCar", "train", "bus", "boat", "event"]
    package var web = Web()
    package var sandbox = Sandbox()
    package var verification = Verification()
    package var testMode = TestMode()
    package var quotas = Quotas()
    package var retention = Retention()

    package init() {}

    /// Reads a policy from YAML text; absent fields keep their defaults.
    package init(yaml: String, source: String) throws(AdmissionError) {
        do {
            self = try Self.decode(yaml: yaml)
        } catch {
            throw AdmissionError(code: .policyInvalid, reason: "\(source): \(Self.describe(error))")
        }
        if !sandbox.enabled && !sandbox.mayDisable {
            throw AdmissionError(code: .policyInvalid, reason: "\(source): sandbox.enabled is false, but this policy does not allow running extraction outside the sandbox")
        }
        let periods = [
            ("retention.reservationsAfterEndDays", retention.reservationsAfterEndDays),
            ("retention.decisionLogDays", retention.decisionLogDays),
            ("retention.spooledMessagesDays", retention.spooledMessagesDays),
        ]
        if let (name, _) = periods.first(where: { !$0.1.isFinite || $0.1 < 0 || $0.1 > 36_500 }) {
            throw AdmissionError(code: .policyInvalid, reason: "\(source): \(name) is a number of days from 0 (keep forever) to 36500")
        }
        if !retention.sweepIntervalSeconds.isFinite || retention.sweepIntervalSeconds < 1 || retention.sweepIntervalSeconds > 7 * 86_400 {
            throw AdmissionError(code: .policyInvalid, reason: "\(source): retention.sweepIntervalSeconds is from 1 to 604800")
        }
        if registration.approveOnRegister && registration.requireProof {
            throw AdmissionError(code: .policyInvalid, reason: "\(source): registration.approveOnRegister approves without a proof of domain control, which registration.requireProof forbids; set one of them to false")
        }
        if verification.recheckIntervalSeconds < 1 || verification.missingChecksBeforeSuspension < 1 {
            throw AdmissionError(code: .policyInvalid, reason: "\(source): verification.recheckIntervalSeconds and verification.missingChecksBeforeSuspension must be at least 1")
        }
        for (name, limit) in [
            ("domain.messages", quotas.domain.messages), ("domain.reservations", quotas.domain.reservations),
            ("domain.bytes", quotas.domain.bytes), ("owner.messages", quotas.owner.messages),
            ("owner.reservations", quotas.owner.reservations), ("owner.bytes", quotas.owner.bytes),
        ] where limit.limit < 0 || limit.seconds < 1 || limit.seconds > 366 * 86_400 {
            throw AdmissionError(code: .policyInvalid, reason: "\(source): quotas.\(name) needs a limit of 0 or more (0: none) and seconds from 1 to 31622400")
        }
        let known = Set(Policy().acceptedKinds)
        if let unknown = acceptedKinds.first(where: { !known.contains($0) }) {
            throw AdmissionError(code: .policyInvalid, reason: "\(source): acceptedKinds names '\(unknown)'; known kinds are \(known.sorted().joined(separator: ", "))")
        }
    }

    /// Loads `NAME` from the first directory in `searchPaths` that has `NAME.yaml`, or a file path
    /// when `nameOrPath` contains a `/` or ends in `.yaml`.
    package static func load(_ nameOrPath: String, searchPaths: [String]) throws(AdmissionError) -> (Policy, path: String) {
        let candidates: [String]
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".yaml") || nameOrPath.hasSuffix(".yml") {
            candidates = [nameOrPath]
        } else {
            candidates = searchPaths.map { ($0 as NSString).appendingPathComponent("\(nameOrPath).yaml") }
        }
        for path in candidates {
            if let data = FileManager.default.contents(atPath: path) {
                var policy = try Policy(yaml: String(decoding: data, as: UTF8.self), source: path)
                let directory = (path as NSString).deletingLastPathComponent
                policy.web.trustBundles = policy.web.trustBundles.map { $0.hasPrefix("/") ? $0 : (directory as NSString).appendingPathComponent($0) }
                return (policy, path)
            }
        }
        throw AdmissionError(code: .policyNotFound, reason: "no policy '\(nameOrPath)' (looked in \(candidates.joined(separator: ", "))); use development, production, test or a path to a .yaml file")
    }

    /// A problem in the policy file's content.
    struct Problem: Error {
        var reason: String
    }

    private static func decode(yaml: String) throws -> Policy {
        let file: Any
        do {
            file = try Yams.load(yaml: yaml) ?? [String: Any]()
        } catch {
            throw Problem(reason: "not valid YAML: \(error)")
        }
        guard file is [String: Any] else { throw Problem(reason: "a policy is a mapping of settings") }
        let defaults = try JSONSerialization.jsonObject(with: JSONEncoder().encode(Policy()))
        let merged = try merge(file, over: defaults, path: "")
        return try JSONDecoder().decode(Policy.self, from: JSONSerialization.data(withJSONObject: merged))
    }

    private static func describe(_ error: any Error) -> String {
        if let problem = error as? Problem { return problem.reason }
        if let decoding = error as? DecodingError {
            switch decoding {
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context), .dataCorrupted(let context):
                let path = context.codingPath.map(\.stringValue).joined(separator: ".")
                return "\(path.isEmpty ? "" : path + ": ")\(context.debugDescription)"
            @unknown default:
                return String(describing: error)
            }
        }
        return String(describing: error)
    }
}

extension Policy {
    /// Lays the file's mapping over the defaults, key by key, refusing keys the policy does not have
    /// (a typo must not silently leave a default in force).
    static func merge(_ file: Any, over defaults: Any, path: String) throws -> Any {
        guard let fileMapping = file as? [String: Any], let defaultMapping = defaults as? [String: Any] else { return file }
        var merged = defaultMapping
        for (key, value) in fileMapping {
            let keyPath = path.isEmpty ? key : path + "." + key
            guard let defaultValue = defaultMapping[key] else {
                throw Problem(reason: "unknown setting '\(keyPath)'; known settings here: \(defaultMapping.keys.sorted().joined(separator: ", "))")
            }
            // A mapping whose default is empty (web.hosts) is data, not settings: taken whole.
            if let nested = defaultValue as? [String: Any], !nested.isEmpty {
                merged[key] = try merge(value, over: nested, path: keyPath)
            } else {
                merged[key] = value
            }
        }
        return merged
    }
}
