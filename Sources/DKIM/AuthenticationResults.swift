import Foundation

/// Renders verification results as an `Authentication-Results` header field (RFC 8601 §2.2,
/// with `header.d`, `header.i`, `header.s` and `header.a` per RFC 6376 §7.1 and `header.b` per RFC 6008).
package enum AuthenticationResults {
    /// - Parameter authServID: the name of the verifying host (RFC 8601 §2.5).
    package static func header(for verification: DKIMVerification, authServID: String) -> String {
        guard !verification.signatures.isEmpty else {
            return "Authentication-Results: \(authServID);\r\n\tdkim=none (message not signed)"
        }
        var field = "Authentication-Results: \(authServID)"
        for signature in verification.signatures {
            var clause = "dkim=\(signature.result.rawValue)"
            var comment: String
            if signature.result == .pass, let bits = signature.keyBits, let algorithm = signature.algorithm {
                comment = "\(bits)-bit \(algorithm.hasPrefix("ed25519") ? "ed25519" : "rsa") key"
            } else {
                comment = signature.code?.description ?? ""
                if !signature.reason.isEmpty { comment += comment.isEmpty ? signature.reason : ": " + signature.reason }
            }
            if !comment.isEmpty { clause += " (\(escapeComment(comment)))" }
            if let domain = signature.signingDomain { clause += " header.d=\(domain)" }
            // RFC 8601 §2.2 pvalue: [local-part] "@" domain-name may stand unquoted.
            if let identity = signature.identity { clause += " header.i=\(isAddressValue(identity) ? identity : quoteIfNeeded(identity))" }
            if let selector = signature.selector { clause += " header.s=\(quoteIfNeeded(selector))" }
            if let algorithm = signature.algorithm { clause += " header.a=\(quoteIfNeeded(algorithm))" }
            if let b = signature.signatureFingerprint, !b.isEmpty { clause += " header.b=\(quoteIfNeeded(b))" }
            field += ";\r\n\t" + clause
        }
        return field
    }

    /// Parentheses and backslashes inside a comment are escaped (RFC 5322 §3.2.2); line breaks removed.
    static func escapeComment(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "(", ")", "\\": out += "\\\(character)"
            case "\r", "\n": out += " "
            default: out.append(character)
            }
        }
        return out
    }

    static func isAddressValue(_ value: String) -> Bool {
        guard let at = value.lastIndex(of: "@") else { return false }
        let local = value[..<at]
        let domain = value[value.index(after: at)...]
        let atext = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-/=?^_`{|}~.")
        return !domain.isEmpty && domain.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
            && local.allSatisfy { atext.contains($0) }
    }

    /// A value that is not an RFC 2045 token is written as a quoted string.
    static func quoteIfNeeded(_ value: String) -> String {
        let special = Set("()<>@,;:\\\"/[]?= \t")
        guard value.contains(where: { special.contains($0) || !$0.isASCII }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
