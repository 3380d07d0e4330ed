import Admission
import DKIM

extension CheckDetails {
    /// A refusal of the message as a whole: its code, the header or URL it concerns, and what to do.
    package struct Refusal: Codable, Sendable, Hashable {
        package var code: String
        /// `From`, `DKIM-Signature (d=skyways.example, s=mail)`, `To, Cc`, the page's URL.
        package var at: String
        package var hint: String
    }

    /// Where each of an email's refusal `codes` is and what to do about it.
    static func refusals(_ codes: [String], _ authentication: EmailAuthentication) -> [Refusal] {
        let from = authentication.fromDomain?.ascii ?? "the From domain"
        let own = authentication.alignedSignatures.first ?? authentication.verification.signatures.first
        let signature =
            own.map { "DKIM-Signature (d=\($0.signingDomain ?? "?"), s=\($0.selector ?? "?"))" } ?? "DKIM-Signature"
        return codes.map { code in
            let (at, hint): (String, String) =
                switch code {
                case "admission.from-invalid":
                    ("From", "give exactly one From address with a valid domain")
                case "admission.unsigned":
                    ("DKIM-Signature", "sign the message with DKIM (d= \(from) or its organizational domain)")
                case "admission.signature-not-aligned":
                    (signature, "sign with d= \(from) or a domain under the same organizational domain")
                case "admission.dkim-failed":
                    (signature, "no signature from \(from)'s organization verified; the DKIM code says why")
                case "admission.body-length-partial", "admission.markup-in-unsigned-tail":
                    (signature, "sign the whole body: drop l= from the signature")
                case "admission.recipient-not-signed":
                    ("To, Cc", "the owner must be a To or Cc address the signature covers (h= lists To and Cc)")
                case "admission.no-owner":
                    ("To, Cc", "address the confirmation to its owner in a signed To or Cc field")
                case "admission.message-too-large":
                    ("the message", "send a smaller message")
                case "registry.domain-not-registered":
                    ("From (\(from))", "register \(from), or its parent domain, with the gateway")
                case "registry.domain-pending":
                    ("From (\(from))", "the registration awaits approval by the gateway's operator")
                case "registry.domain-revoked":
                    ("From (\(from))", "the registration was revoked; ask the gateway's operator")
                case "markup.no-reservations":
                    ("the HTML body", "add schema.org reservation markup (JSON-LD or Microdata) to a text/html part")
                default:
                    code.hasPrefix("dkim.")
                        ? (signature, own?.reason ?? "the DKIM check could not complete; it is retried later")
                        : ("the message", "see the code's description in the README")
                }
            return Refusal(code: code, at: at, hint: hint)
        }
    }
}
