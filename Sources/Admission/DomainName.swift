internal import CLibIDN2

/// A domain name in its canonical form: lower case, A-labels (IDNA2008 through libidn2), no
/// trailing dot. What the registry stores and compares.
package struct DomainName: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    /// The ASCII (A-label) form, e.g. `xn--bcher-kva.example`.
    package let ascii: String

    package var description: String { ascii }

    package static func < (lhs: DomainName, rhs: DomainName) -> Bool { lhs.ascii < rhs.ascii }

    /// Normalizes `input`: trims, drops one trailing dot, maps to lower case and A-labels
    /// (UTS #46 non-transitional, NFC), and checks the result is a host name. Every check runs on the
    /// name's Unicode form, whichever form it was typed in: `xn--skywys-6nf.example` is the same name as
    /// `skywаys.example` (with a Cyrillic а) and is refused the same way.
    /// - Throws: `.ipLiteral` for addresses, `.mixedScripts` for a label mixing writing systems
    ///   (as homograph attacks do), `.domainInvalid` for anything else that is not a domain name,
    ///   an A-label that is not valid Punycode for a valid U-label (RFC 5891 §5.4) included.
    package init(normalizing input: String) throws(AdmissionError) {
        var text = input.trimmingWhitespace
        if text.hasSuffix(".") { text.removeLast() }
        guard !text.isEmpty else {
            throw AdmissionError(code: .domainInvalid, reason: "the domain is empty; give a name such as booking.example.com")
        }
        if DomainName.isIPLiteral(text) {
            throw AdmissionError(code: .ipLiteral, reason: "\(text) is an IP address; register the domain name the mail and pages come from")
        }
        // The typed labels first, so the message quotes what was typed when it mixes scripts.
        for label in text.split(separator: ".", omittingEmptySubsequences: false) {
            try DomainName.checkScripts(of: Substring(label.lowercased()))
        }
        let ascii = try DomainName.toASCII(text)
        let labels = ascii.split(separator: ".", omittingEmptySubsequences: false)
        guard ascii.utf8.count <= 253, labels.count >= 1,
            labels.allSatisfy({ label in
                !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                    && label.utf8.allSatisfy { $0.isLetterDigitOrHyphen }
            })
        else {
            throw AdmissionError(code: .domainInvalid, reason: "\(input) is not a valid host name (labels of letters, digits and hyphens, at most 63 bytes each)")
        }
        // Then the Unicode form of every A-label, whether it was typed as one or made from a U-label: a label that
        // is not valid Punycode is refused here.
        for label in labels where DomainName.isALabel(label) {
            try DomainName.checkScripts(of: Substring(try DomainName.uLabel(of: label, in: input)))
        }
        self.ascii = ascii
    }

    /// Reads a stored name as it is, without normalizing again.
    package init(trustedASCII: String) { ascii = trustedASCII }

    /// The Unicode (U-label) form for display; the ASCII form when conversion fails.
    package var unicode: String {
        var output: UnsafeMutablePointer<CChar>? = nil
        guard idn2_to_unicode_8z8z(ascii, &output, 0) == 0 /* IDN2_OK */, let output else { return ascii }
        defer { clibidn2_free(output) }
        return String(cString: output)
    }

    /// True when `self` is `other` or a subdomain of it.
    package func isWithin(_ other: DomainName) -> Bool {
        ascii == other.ascii || ascii.hasSuffix("." + other.ascii)
    }

    /// The domain and its parents, most specific first: `a.b.example.com`, `b.example.com`, `example.com`, `com`.
    package var selfAndParents: [DomainName] {
        let labels = ascii.split(separator: ".")
        return labels.indices.map { DomainName(trustedASCII: labels[$0...].joined(separator: ".")) }
    }

    /// Whether `label` is an A-label: the ACE prefix `xn--` (RFC 5890 §2.3.2.1), in any case.
    static func isALabel(_ label: some StringProtocol) -> Bool {
        label.utf8.count >= 4 && label.prefix(4).lowercased() == "xn--"
    }

    /// The U-label an A-label stands for. Valid only when the Punycode decodes to a U-label that IDNA2008
    /// allows and that encodes back to the same A-label (RFC 5891 §5.4): `xn--abc` decodes to a control
    /// character and is refused, so a name cannot pass in its ASCII form what its Unicode form would not.
    /// - Parameter name: the whole name as given, for the message.
    static func uLabel(of label: some StringProtocol, in name: String) throws(AdmissionError) -> String {
        let aLabel = label.lowercased()
        var unicode: String?
        var decoded: UnsafeMutablePointer<CChar>? = nil
        if idn2_to_unicode_8z8z(aLabel, &decoded, 0) == 0, let decoded { unicode = String(cString: decoded) }
        if let decoded { clibidn2_free(decoded) }
        var roundTrip: String?
        if let unicode, !unicode.contains(".") {
            var encoded: UnsafeMutablePointer<CChar>? = nil
            let flags = Int32(IDN2_NFC_INPUT.rawValue | IDN2_NONTRANSITIONAL.rawValue)
            if idn2_to_ascii_8z(unicode, &encoded, flags) == 0, let encoded { roundTrip = String(cString: encoded) }
            if let encoded { clibidn2_free(encoded) }
        }
        guard let unicode, roundTrip == aLabel else {
            throw AdmissionError(code: .domainInvalid, reason: "the label '\(label)' of \(name) is not valid Punycode (an A-label must decode to a valid internationalized label and encode back to itself); give the name in its Unicode form or as a valid A-label")
        }
        return unicode
    }

    /// Refuses a label that mixes writing systems.
    static func checkScripts(of label: Substring) throws(AdmissionError) {
        if let problem = ScriptCheck.mixedScripts(in: label) {
            throw AdmissionError(code: .mixedScripts, reason: "the label '\(label)' mixes \(problem); a name must not mix writing systems")
        }
    }

    static func toASCII(_ text: String) throws(AdmissionError) -> String {
        // An ASCII name is its own A-label form (its A-labels are checked by `init(normalizing:)`), so ASCII
        // labels libidn2 would refuse, such as `ab--cd`, stay as they are.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        var output: UnsafeMutablePointer<CChar>? = nil
        let flags = Int32(IDN2_NFC_INPUT.rawValue | IDN2_NONTRANSITIONAL.rawValue)
        let status = idn2_to_ascii_8z(text, &output, flags)
        guard status == 0, let output else {
            let message = idn2_strerror(status).map { String(cString: $0) } ?? "error \(status)"
            throw AdmissionError(code: .domainInvalid, reason: "\(text) is not a valid internationalized domain name (\(message))")
        }
        defer { clibidn2_free(output) }
        return String(cString: output).lowercased()
    }

    static func isIPLiteral(_ text: String) -> Bool {
        if text.hasPrefix("[") || text.contains(":") { return true }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { !$0.isEmpty && $0.count <= 3 && $0.allSatisfy(\.isASCIIDigit) && Int($0)! <= 255 }
    }
}

extension UInt8 {
    fileprivate var isLetterDigitOrHyphen: Bool {
        (self >= 0x61 && self <= 0x7A) || (self >= 0x30 && self <= 0x39) || self == 0x2D || self == 0x5F
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    var trimmingWhitespace: String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
