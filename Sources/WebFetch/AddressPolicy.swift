/// Which addresses the fetcher may connect to: public unicast always, and the special
/// categories listed in `allowed`. The default allows nothing else, which is what production
/// needs: a page URL must never make the gateway reach its own host, its network or a cloud
/// metadata service (server-side request forgery).
package struct AddressPolicy: Hashable, Sendable {
    /// Special categories allowed in addition to public unicast.
    package var allowed: Set<AddressCategory>

    package init(allowing allowed: Set<AddressCategory> = []) {
        self.allowed = allowed
    }

    /// Only public unicast addresses: the production policy.
    package static let publicOnly = AddressPolicy()

    /// Public unicast and loopback: the test policy, for the local HTTPS test site on 127.0.0.1.
    package static let allowingLoopback = AddressPolicy(allowing: [.loopback])

    /// Whether the fetcher may connect to `address`.
    package func permits(_ address: IPAddress) -> Bool {
        let category = SpecialAddresses.classify(address).category
        return category == .publicUnicast || allowed.contains(category)
    }
}
