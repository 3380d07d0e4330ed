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
