internal import Crypto
package import Foundation

/// An owner address reduced to a keyed hash, for what a sender reads of the decision log: the same owner reads the
/// same within one sender domain (a sender can tell its test inbox's entries apart), differs between sender domains
/// (two senders cannot match their recipients), and cannot be reversed or confirmed by guessing without the key.
///
/// `HMAC-SHA256(HMAC-SHA256(key, "gateway owner pseudonym v1" 0x00 domain), address)`, its first 16 bytes in hex
/// behind `owner:`. The key is 32 random bytes that live in the store (``SecretStore``, name ``secretName``), so every
/// node computes the same pseudonyms.
package struct OwnerPseudonym: Sendable {
    /// The store secret that keys every pseudonym.
    package static let secretName = "log-owner-pseudonym-key"

    private let key: SymmetricKey

    package init(key: Data) {
        self.key = SymmetricKey(data: key)
    }

    /// 32 bytes from the system's cryptographic generator: a new key for ``SecretStore/secret(_:orMake:)``.
    package static func makeKey() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// The pseudonym of `owner` for the sender domain `domain`.
    package func pseudonym(of owner: OwnerAddress, forDomain domain: String) -> String {
        let label = Data("gateway owner pseudonym v1".utf8) + [0] + Data(StoreNames.domain(domain).utf8)
        let domainKey = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: label, using: key)))
        let code = HMAC<SHA256>.authenticationCode(for: Data(owner.address.utf8), using: domainKey)
        return "owner:" + Data(code).prefix(16).map { String(format: "%02x", $0) }.joined()
    }
}
