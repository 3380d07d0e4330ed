import Foundation
package import Hummingbird
package import NIOCore

/// The per-request context: Hummingbird's core storage plus the peer's address (for the decision log's source).
package struct GatewayRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    package let remoteAddress: SocketAddress?

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// Bodies are read with explicit limits per route (the policy's message size); this bounds the rest.
    package var maxUploadSize: Int { 1 << 20 }
}

extension GatewayRequestContext {
    /// A path parameter, percent-decoded (Hummingbird hands on the raw segment: `eva%40guest.example.net`).
    func pathParameter(_ name: String) throws -> String {
        let raw = try parameters.require(name)
        return raw.removingPercentEncoding ?? raw
    }
}
