import Foundation

/// The Public Suffix List (publicsuffix.org), as Debian's `publicsuffix` package installs it:
/// which names are registries (`com`, `co.uk`, `github.io`) and so what a name's organizational
/// domain is (RFC 7489 §3.2).
package struct PublicSuffixList: Sendable {
    /// Where Debian's `publicsuffix` package puts the list.
    package static let debianPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    private var rules: Set<String> = []
    /// `*.ck` is stored as `ck`.
    private var wildcards: Set<String> = []
    /// `!www.ck` is stored as `www.ck`.
    private var exceptions: Set<String> = []

    package init(contentsOfFile path: String = PublicSuffixList.debianPath) throws(AdmissionError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AdmissionError(code: .publicSuffixListUnavailable, reason: "cannot read the Public Suffix List at \(path); install Debian's publicsuffix package")
        }
        self.init(listText: String(decoding: data, as: UTF8.self))
    }

    /// Parses the list's text: one rule per line, `//` comments, `*.` wildcards, `!` exceptions.
    package init(listText: String) {
        for rawLine in listText.split(whereSeparator: \.isNewline) {
            let line = rawLine.split(separator: " ").first.map(String.init) ?? ""
            guard !line.isEmpty, !line.hasPrefix("//") else { continue }
            if line.hasPrefix("!") {
                if let rule = Self.ascii(String(line.dropFirst())) { exceptions.insert(rule) }
            } else if line.hasPrefix("*.") {
                if let rule = Self.ascii(String(line.dropFirst(2))) { wildcards.insert(rule) }
            } else if let rule = Self.ascii(line) {
                rules.insert(rule)
            }
        }
    }

    private static func ascii(_ rule: String) -> String? {
        try? DomainName.toASCII(rule)
    }

    /// The public suffix of `domain` by the list's algorithm: an exception rule prevails, then the
    /// longest matching rule, then the implicit `*` rule (the last label).
    package func publicSuffix(of domain: DomainName) -> String {
        let labels = domain.ascii.split(separator: ".")
        let count = labels.count
        for index in 0..<count {
            let suffix = labels[index...].joined(separator: ".")
            if exceptions.contains(suffix) { return labels[(index + 1)...].joined(separator: ".") }
        }
        for index in 0..<count {
            let suffix = labels[index...].joined(separator: ".")
            if index >= 1 && wildcards.contains(suffix) { return labels[(index - 1)...].joined(separator: ".") }
            if rules.contains(suffix) { return suffix }
        }
        return String(labels[count - 1])
    }

    /// True when `domain` is itself a public suffix: nobody's organizational domain.
    package func isPublicSuffix(_ domain: DomainName) -> Bool {
        publicSuffix(of: domain) == domain.ascii
    }

    /// The organizational domain: the public suffix plus one label; nil for a public suffix.
    package func organizationalDomain(of domain: DomainName) -> DomainName? {
        let suffix = publicSuffix(of: domain)
        guard domain.ascii != suffix else { return nil }
        let labels = domain.ascii.split(separator: ".")
        let suffixCount = suffix.split(separator: ".").count
        return DomainName(trustedASCII: labels.suffix(suffixCount + 1).joined(separator: "."))
    }
}
