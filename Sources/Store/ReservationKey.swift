/// The identity of a stored reservation item: (owner, source domain, item reference) (DESIGN.md, "Identity and
/// lifecycle"). Ingesting the same key again updates that record.
package struct ReservationKey: Codable, Hashable, Sendable {
    /// Whose reservation this is.
    package var owner: OwnerAddress
    /// The registered domain it was authenticated for, lower case without a trailing dot.
    package var sourceDomain: String
    /// The item's own key: the `reservationId` of a one-part booking, a per-part key otherwise (a flight leg).
    package var itemReference: String

    /// - Parameter sourceDomain: normalized here (``StoreNames/domain(_:)``), so every backend keys alike.
    package init(owner: OwnerAddress, sourceDomain: String, itemReference: String) {
        self.owner = owner
        self.sourceDomain = StoreNames.domain(sourceDomain)
        self.itemReference = itemReference
    }
}

/// How the store spells names it compares, in one place for every backend.
package enum StoreNames {
    /// A domain name as the store keys it: ASCII lowercase, without a trailing dot.
    package static func domain(_ domain: String) -> String {
        var bytes = Array(domain.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        for index in bytes.indices where bytes[index] >= UInt8(ascii: "A") && bytes[index] <= UInt8(ascii: "Z") {
            bytes[index] += 32
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
