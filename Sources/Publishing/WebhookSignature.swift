internal import Crypto
internal import Foundation

/// A webhook subscription's secret in the Standard Webhooks form (https://www.standardwebhooks.com): `whsec_` and the
/// base64 of the HMAC key (24 to 64 bytes; the gateway makes 32 random ones).
package struct WebhookSecret: Hashable, Sendable, CustomStringConvertible {
    package let key: [UInt8]

    /// A new secret: 32 bytes from the system's cryptographic generator.
    package static func generate() -> WebhookSecret {
        var generator = SystemRandomNumberGenerator()
        var key: [UInt8] = []
        for _ in 0..<4 {
            var word = generator.next() as UInt64
            for _ in 0..<8 {
                key.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return WebhookSecret(key: key)
    }

    private init(key: [UInt8]) { self.key = key }

    /// Reads `whsec_BASE64`; nil for anything else.
    package init?(_ text: String) {
        guard text.hasPrefix(Self.prefix), let key = Data(base64Encoded: String(text.dropFirst(Self.prefix.count))),
            (24...64).contains(key.count)
        else { return nil }
        self.key = Array(key)
    }

    package static let prefix = "whsec_"

    package var description: String { Self.prefix + Data(key).base64EncodedString() }
}

/// Signing a delivery the Standard Webhooks way: `webhook-id`, `webhook-timestamp` (Unix seconds) and
/// `webhook-signature: v1,<base64 of HMAC-SHA256 over "id.timestamp.body">`, so that receivers verify it with the
/// published libraries.
package enum WebhookSignature {
    /// The three headers of a delivery of `body` (the exact bytes sent), in order.
    package static func headers(id: String, timestamp: Int64, body: [UInt8], secret: WebhookSecret) -> [(String, String)] {
        [
            ("webhook-id", id), ("webhook-timestamp", String(timestamp)),
            ("webhook-signature", signature(id: id, timestamp: timestamp, body: body, secret: secret)),
        ]
    }

    /// `v1,` and the base64 of HMAC-SHA256(key, `id.timestamp.body`).
    package static func signature(id: String, timestamp: Int64, body: [UInt8], secret: WebhookSecret) -> String {
        var content = Array("\(id).\(timestamp).".utf8)
        content += body
        let mac = HMAC<SHA256>.authenticationCode(for: content, using: SymmetricKey(data: secret.key))
        return "v1," + Data(mac).base64EncodedString()
    }

    /// Whether `header` (space-separated `v1,...` signatures) holds a valid signature of `body` for `id` and
    /// `timestamp`, compared in constant time.
    package static func isValid(header: String, id: String, timestamp: Int64, body: [UInt8], secret: WebhookSecret)
        -> Bool
    {
        let expected = Array(signature(id: id, timestamp: timestamp, body: body, secret: secret).utf8)
        return header.split(separator: " ").contains { candidate in
            let given = Array(candidate.utf8)
            guard given.count == expected.count else { return false }
            return zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }
}
