/// Whose reservations these are: one mailbox address, the same typed value from the LMTP recipient (or `--owner`,
/// or a signed To/Cc address) through admission to the store, the decision log and the API (DESIGN.md, "Owner and
/// replay").
///
/// Compared and stored in lower case. Valid: one `@` with text on both sides, no spaces, controls or angle brackets,
/// at most 254 octets (RFC 5321 §4.5.3.1.3). Encoded as a plain JSON string.
package struct OwnerAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The address, lower case.
    package let address: String

    /// The address `text` names, lower-cased; nil when `text` is not a mailbox address an owner can have.
    package init?(_ text: String) {
        let lowered = text.lowercased()
        guard Self.isValid(lowered) else { return nil }
        address = lowered
    }

    /// True when `text` is an address an owner can have (see the type's rules).
    package static func isValid(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        return text.utf8.count <= 254 && parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty
            && !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || $0 == "<" || $0 == ">" })
    }

    package var description: String { address }

    package static func < (lhs: OwnerAddress, rhs: OwnerAddress) -> Bool { lhs.address < rhs.address }
}

extension OwnerAddress: Codable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let owner = OwnerAddress(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not an owner address")
        }
        self = owner
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(address)
    }
}
