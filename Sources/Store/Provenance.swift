package import Foundation
internal import Reservations

/// Where one version of a reservation came from (issue 16): kept with every version, shown by
/// `gateway reservations show` and the API, and part of an owner's export.
///
/// A list of sources, so that a version vouched for by more than one document (an app donation confirming an email,
/// say) can name each without a change of schema. Empty for versions stored before provenance was kept.
package struct Provenance: Codable, Hashable, Sendable {
    /// One document that vouched for the version.
    package struct Source: Codable, Hashable, Sendable {
        /// How it reached the gateway.
        package var channel: IngestionChannel
        /// The domain it was authenticated for, exactly (the From domain, the page's host); the reservation's key
        /// names the registered domain that covers it.
        package var sourceDomain: String
        /// For email: the aligned DKIM signature that passed (`d=`, `s=`).
        package var dkim: DKIMIdentity?
        /// For email: SHA-256 (hex) of the Message-ID, so the message can be matched without keeping its identifier.
        package var messageIDSHA256: String?
        /// For the web: the final URL fetched, after redirects.
        package var url: String?
        /// For the web: SHA-256 (hex) of the certificate the server presented.
        package var certificateSHA256: String?
        /// For the web: whether that certificate was verified (false only under `allow-unverified-sources`).
        package var certificateVerified: Bool?
        /// For an app donation: the app's identifier (`com.skyways.app`).
        package var appIdentifier: String?
        /// For an app donation: whether the app's own token made it (false only under `allow-unverified-sources`).
        package var appVerified: Bool?
        /// The developer flags the admission relied on.
        package var flags: [String]
        /// What else the admission relied on, named beside the flags: `test-mode` (the domain's test mode, admitting
        /// only its listed owners), `unapproved-domain` (a policy admitting domains not approved yet).
        package var testModes: [String]
        /// The policy that admitted it (`production`, `development`, ...).
        package var policy: String
        /// When the gateway admitted it.
        package var admittedAt: Date

        package init(
            channel: IngestionChannel, sourceDomain: String, dkim: DKIMIdentity? = nil, messageIDSHA256: String? = nil,
            url: String? = nil, certificateSHA256: String? = nil, certificateVerified: Bool? = nil,
            appIdentifier: String? = nil, appVerified: Bool? = nil, flags: [String] = [], testModes: [String] = [],
            policy: String, admittedAt: Date
        ) {
            self.channel = channel
            self.sourceDomain = sourceDomain
            self.dkim = dkim
            self.messageIDSHA256 = messageIDSHA256
            self.url = url
            self.certificateSHA256 = certificateSHA256
            self.certificateVerified = certificateVerified
            self.appIdentifier = appIdentifier
            self.appVerified = appVerified
            self.flags = flags
            self.testModes = testModes
            self.policy = policy
            self.admittedAt = StoreTime.truncated(admittedAt)
        }
    }

    /// A DKIM signature's identity (RFC 6376 §3.5): the signing domain and the selector.
    package struct DKIMIdentity: Codable, Hashable, Sendable {
        /// `d=`.
        package var signingDomain: String
        /// `s=`.
        package var selector: String

        package init(signingDomain: String, selector: String) {
            self.signingDomain = signingDomain
            self.selector = selector
        }
    }

    package var sources: [Source]

    package init(sources: [Source] = []) {
        self.sources = sources
    }

    package var isEmpty: Bool { sources.isEmpty }
}

extension Provenance {
    /// The provenance as both backends store it: JSON with sorted keys, instants in milliseconds since 1970. Written
    /// member by member (every version stores one): the bytes `CanonicalJSONEncoder` writes for it, which
    /// `ProvenanceJSONTests` check.
    package func storedJSON() throws(StoreError) -> String {
        var json = CanonicalJSONBuilder(dateEncoding: .millisecondsSince1970)
        json.beginObject()
        json.key("sources")
        json.beginArray()
        for source in sources {
            // The members in sorted order; nil optionals left out, as the synthesized `encode(to:)` does.
            json.beginObject()
            json.key("admittedAt")
            do { try json.date(source.admittedAt) } catch {
                throw StoreError(code: .invalidArgument, reason: "a provenance could not be encoded as JSON")
            }
            if let appIdentifier = source.appIdentifier { json.key("appIdentifier"); json.string(appIdentifier) }
            if let appVerified = source.appVerified { json.key("appVerified"); json.bool(appVerified) }
            if let certificate = source.certificateSHA256 { json.key("certificateSHA256"); json.string(certificate) }
            if let verified = source.certificateVerified { json.key("certificateVerified"); json.bool(verified) }
            json.key("channel")
            json.string(source.channel.rawValue)
            if let dkim = source.dkim {
                json.key("dkim")
                json.beginObject()
                json.key("selector")
                json.string(dkim.selector)
                json.key("signingDomain")
                json.string(dkim.signingDomain)
                json.endObject()
            }
            json.key("flags")
            json.strings(source.flags)
            if let messageID = source.messageIDSHA256 { json.key("messageIDSHA256"); json.string(messageID) }
            json.key("policy")
            json.string(source.policy)
            json.key("sourceDomain")
            json.string(source.sourceDomain)
            json.key("testModes")
            json.strings(source.testModes)
            if let url = source.url { json.key("url"); json.string(url) }
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// A provenance read back from ``storedJSON()``.
    /// - Throws: `store.corrupt` when the text is not one.
    package init(storedJSON text: String) throws(StoreError) {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        do {
            self = try decoder.decode(Provenance.self, from: Data(text.utf8))
        } catch {
            throw StoreError(
                code: .corrupt, reason: "a stored provenance is not valid JSON; restore the database or upgrade the gateway")
        }
    }
}
