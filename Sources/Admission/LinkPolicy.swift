import Foundation
package import Markup
package import Reservations

/// Which links in admitted markup are kept (issue 15): the URLs a calendar or assistant may open (`url`,
/// `checkinUrl`, `modifyReservationUrl`, action targets, `image`, ticket and boarding-pass links, ...) are kept only when
/// they are `https`, carry no user info, do not name an IP address, and their host is the sender's organizational
/// domain or below it, or a host its registration lists (or below). Any other link is dropped from the markup with a
/// warning. The gateway never opens a link it finds in markup: this reads the text only.
///
/// Pure: applied after resolution and before the store, by ``AdmissionDecision``.
package struct LinkPolicy: Sendable {
    /// Why a link was dropped. Stable codes.
    package enum Verdict: Hashable, Sendable {
        case kept
        case dropped(Diagnostic.Code)
    }

    /// The sender's organizational domain (the From domain's, the page host's).
    package var organizationalDomain: DomainName
    /// Hosts the registration lists as its own, each covering its subdomains.
    package var hosts: [DomainName]

    package init(organizationalDomain: DomainName, hosts: [String] = []) {
        self.organizationalDomain = organizationalDomain
        self.hosts = hosts.map(DomainName.init(trustedASCII:))
    }

    /// The verdict on one link, as written in the markup.
    package func verdict(_ text: String) -> Verdict {
        let bytes = Array(text.utf8)
        // Whitespace, controls and backslashes are read differently by different URL parsers (WHATWG strips or
        // turns them into slashes): a link that needs them is refused rather than guessed at.
        guard !bytes.isEmpty, !bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\\") }) else {
            return .dropped(.urlInvalid)
        }
        guard let colon = text.firstIndex(of: ":") else { return .dropped(.urlInvalid) }
        let scheme = text[..<colon]
        guard let first = scheme.unicodeScalars.first, first.isASCIILetter,
            scheme.unicodeScalars.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit || "+-.".unicodeScalars.contains($0) })
        else { return .dropped(.urlInvalid) }
        guard scheme.lowercased() == "https" else { return .dropped(.urlNotHTTPS) }
        let rest = text[text.index(after: colon)...]
        guard rest.hasPrefix("//") else { return .dropped(.urlInvalid) }
        let afterSlashes = rest.dropFirst(2)
        let authority = afterSlashes.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if authority.contains("@") { return .dropped(.urlUserinfo) }
        var host = Substring(authority)
        if host.hasPrefix("[") { return .dropped(.urlIPLiteral) }
        if let portColon = host.lastIndex(of: ":") {
            let port = host[host.index(after: portColon)...]
            guard port.allSatisfy(\.isASCIIDigit), port.count <= 5 else { return .dropped(.urlInvalid) }
            host = host[..<portColon]
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        // A percent sign in a host is decoded by browsers (`evil%2Ecom` is `evil.com`): not a name to trust.
        guard !host.isEmpty, !host.contains("%") else { return .dropped(.urlInvalid) }
        if Self.looksLikeIPv4(host) { return .dropped(.urlIPLiteral) }
        let domain: DomainName
        do {
            domain = try DomainName(normalizing: String(host))
        } catch {
            return .dropped(error.code == .ipLiteral ? .urlIPLiteral : .urlHostInvalid)
        }
        if domain.isWithin(organizationalDomain) || hosts.contains(where: { domain.isWithin($0) }) { return .kept }
        return .dropped(.urlForeignHost)
    }

    /// A host the WHATWG URL parser reads as an IPv4 address: its last label is a number (decimal, or hex with
    /// `0x`), as in `127.1`, `2130706433` and `0x7f.0.0.1`.
    static func looksLikeIPv4(_ host: Substring) -> Bool {
        guard let last = host.split(separator: ".", omittingEmptySubsequences: false).last, !last.isEmpty else {
            return false
        }
        let lower = last.lowercased()
        if lower.hasPrefix("0x") { return lower.dropFirst(2).allSatisfy(\.isHexDigit) }
        return lower.allSatisfy(\.isASCIIDigit)
    }

    // MARK: - Markup

    /// Properties whose every string value is a link (besides any property named `…Url`/`…URL`).
    static let linkProperties: Set<String> = [
        "url", "image", "logo", "target", "urlTemplate", "sameAs", "hasMap", "mainEntityOfPage", "contentUrl",
        "thumbnailUrl", "embedUrl", "downloadUrl", "ticketPrintUrl", "ticketDownloadUrl", "boardingPassUrl",
    ]

    /// Properties that hold a link only sometimes: `ticketToken` is a barcode (`qrCode:AB34`) or a link to one.
    static let sometimesLinkProperties: Set<String> = ["ticketToken"]

    /// Schemes a browser or a mail client would open; a `ticketToken` in one of them is a link.
    static let openableSchemes: Set<String> = ["http", "https", "javascript", "data", "vbscript", "file", "ftp", "blob"]

    static func isLinkProperty(_ name: String) -> Bool {
        linkProperties.contains(name) || name.hasSuffix("Url") || name.hasSuffix("URL")
    }

    /// Whether the value of `property` is a link to judge.
    func isLink(_ value: String, property: String) -> Bool {
        if Self.isLinkProperty(property) { return true }
        guard Self.sometimesLinkProperties.contains(property), let colon = value.firstIndex(of: ":") else { return false }
        return Self.openableSchemes.contains(value[..<colon].lowercased().trimmingCharacters(in: .whitespaces))
            || value[value.index(after: colon)...].hasPrefix("//")
    }

    /// `resolution` with every link this policy does not keep removed — from the normalized markup and from the
    /// typed reservation — and a warning for each, at its property path.
    package func apply(to resolution: Resolution) -> (resolution: Resolution, warnings: [Diagnostic]) {
        var warnings: [Diagnostic] = []
        var filtered = resolution
        filtered.normalized = filter(resolution.normalized, property: nil, path: "", warnings: &warnings)
        if var reservation = filtered.reservation {
            if let url = reservation.url, verdict(url) != .kept { reservation.url = nil }
            for index in reservation.tickets.indices {
                if let token = reservation.tickets[index].ticketToken, isLink(token, property: "ticketToken"),
                    verdict(token) != .kept
                {
                    reservation.tickets[index].ticketToken = nil
                }
            }
            filtered.reservation = reservation
        }
        filtered.diagnostics += warnings
        return (filtered, warnings)
    }

    private func filter(_ value: JSONValue, property: String?, path: String, warnings: inout [Diagnostic]) -> JSONValue {
        switch value {
        case .object(let members):
            var kept: [String: JSONValue] = [:]
            for (name, member) in members {
                if name.hasPrefix("@") {
                    kept[name] = member
                    continue
                }
                let memberPath = path.isEmpty ? name : "\(path).\(name)"
                if let filtered = filterMember(member, property: name, path: memberPath, warnings: &warnings) {
                    kept[name] = filtered
                }
            }
            return .object(kept)
        case .array(let elements):
            return .array(
                elements.enumerated().compactMap { index, element in
                    filterMember(element, property: property ?? "", path: "\(path)[\(index)]", warnings: &warnings)
                })
        default:
            return value
        }
    }

    /// A member's value without the links this policy drops; nil when nothing of it is left.
    private func filterMember(_ value: JSONValue, property: String, path: String, warnings: inout [Diagnostic]) -> JSONValue? {
        switch value {
        case .string(let text) where isLink(text, property: property):
            guard case .dropped(let code) = verdict(text) else { return value }
            warnings.append(Diagnostic(.warning, code, path: path, Self.message(code)))
            return nil
        case .array:
            let filtered = filter(value, property: property, path: path, warnings: &warnings)
            if case .array(let elements) = filtered, elements.isEmpty, case .array(let original) = value, !original.isEmpty {
                return nil
            }
            return filtered
        case .object:
            return filter(value, property: property, path: path, warnings: &warnings)
        default:
            return value
        }
    }

    static func message(_ code: Diagnostic.Code) -> String {
        switch code {
        case .urlNotHTTPS: "the link was dropped: only https links are kept"
        case .urlUserinfo: "the link was dropped: it carries a user name or password before the host"
        case .urlIPLiteral: "the link was dropped: it names an IP address, not the sender's domain"
        case .urlForeignHost:
            "the link was dropped: its host is neither the sender's domain nor below it nor a host the registration lists"
        case .urlHostInvalid: "the link was dropped: its host is not a valid domain name (a look-alike or invalid A-label)"
        default: "the link was dropped: it is not an absolute https URL a client reads the same way everywhere"
        }
    }
}

extension Diagnostic.Code {
    /// A link that is not `https` (`http:`, `javascript:`, `data:`, ...).
    package static let urlNotHTTPS = Diagnostic.Code("markup.url-not-https")
    /// A link with user info (`https://user@host`).
    package static let urlUserinfo = Diagnostic.Code("markup.url-userinfo")
    /// A link to an IP address (`https://192.0.2.1/`, `https://[2001:db8::1]/`, `https://2130706433/`).
    package static let urlIPLiteral = Diagnostic.Code("markup.url-ip-literal")
    /// A link to a host outside the sender's organizational domain and the registration's hosts.
    package static let urlForeignHost = Diagnostic.Code("markup.url-foreign-host")
    /// A link whose host is no valid domain name (a look-alike mixing scripts, an invalid A-label).
    package static let urlHostInvalid = Diagnostic.Code("markup.url-host-invalid")
    /// Not an absolute URL, or one URL parsers read differently (spaces, backslashes, `%` in the host).
    package static let urlInvalid = Diagnostic.Code("markup.url-invalid")
}

extension Unicode.Scalar {
    fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
