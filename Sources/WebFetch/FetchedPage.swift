package import Foundation

/// A page the gateway fetched itself: what admission needs to decide whether its markup may be
/// trusted (where it came from, over what, proven by which certificate) and the bytes to extract.
package struct FetchedPage: Sendable, Hashable {
    /// The URL the caller asked for.
    package var requestedURL: URL
    /// The URL that answered with the page: the source to record and to check against the
    /// registry. Equal to `requestedURL` when there was no redirect.
    package var finalURL: URL
    /// Every URL a redirect led to, in order; the last one is `finalURL`.
    package var redirects: [URL]
    /// 200 or 203.
    package var statusCode: Int
    /// The media type of the Content-Type, lowercased: `text/html` or `application/xhtml+xml`.
    package var contentType: String
    /// The `charset` parameter of the Content-Type, lowercased, if the server gave one.
    package var charset: String?
    /// The body exactly as received (no content coding was accepted).
    package var body: [UInt8]
    /// The IP address the final request was sent to (checked against the address policy).
    package var connectedAddress: String
    /// The leaf certificate the final server presented; nil over plain HTTP.
    package var certificate: PeerCertificate?
    /// True when the final hop was HTTPS.
    package var usedTLS: Bool
    /// True when the final hop was HTTPS and its certificate chain and host name were verified.
    /// False over HTTP, or for a certificate that failed but was accepted because the fetcher
    /// allows unverified sources (a valid certificate is verified whatever the fetcher allows).
    package var certificateVerified: Bool

    package init(
        requestedURL: URL, finalURL: URL, redirects: [URL], statusCode: Int, contentType: String, charset: String?,
        body: [UInt8], connectedAddress: String, certificate: PeerCertificate?, usedTLS: Bool,
        certificateVerified: Bool
    ) {
        self.requestedURL = requestedURL
        self.finalURL = finalURL
        self.redirects = redirects
        self.statusCode = statusCode
        self.contentType = contentType
        self.charset = charset
        self.body = body
        self.connectedAddress = connectedAddress
        self.certificate = certificate
        self.usedTLS = usedTLS
        self.certificateVerified = certificateVerified
    }
}
