internal import NIOCore
internal import NIOSSL
internal import NIOTLS
internal import Synchronization

/// What one TLS connection showed: why its certificate chain was refused, if it was, and the
/// leaf the server presented. Written on the event loop, read by the fetching task.
final class TLSObservation: Sendable {
    private struct State {
        var verificationFailure: TrustStore.Failure?
        var verified = false
        var peerCertificate: [UInt8]?
    }

    private let state = Mutex(State())

    var verificationFailure: TrustStore.Failure? { state.withLock { $0.verificationFailure } }
    /// True once the chain and host name passed the trust store (never set when one failed,
    /// even if the failure was tolerated).
    var verified: Bool { state.withLock { $0.verified } }
    /// The DER of the leaf certificate, once the handshake completed.
    var peerCertificate: [UInt8]? { state.withLock { $0.peerCertificate } }

    func noteVerificationFailure(_ failure: TrustStore.Failure) {
        state.withLock { state in
            if state.verificationFailure == nil { state.verificationFailure = failure }
        }
    }

    func noteVerified() {
        state.withLock { $0.verified = true }
    }

    func notePeerCertificate(_ der: [UInt8]) {
        state.withLock { $0.peerCertificate = der }
    }
}

extension TrustStore.Failure {
    /// The certificate error code for this failure (RFC 5280 §6.1.3 validity and path, RFC 6125).
    func error(for target: PageTarget) -> FetchError {
        let place =
            depth == 0 ? "the certificate of \(target.origin)" : "a CA certificate (depth \(depth)) of \(target.origin)"
        if isValidityPeriod {
            return FetchError(
                code: .certificateExpired,
                reason: "\(place) is outside its validity period (\(text)); the site must renew it, or check the clock"
            )
        }
        if isNameMismatch { return .hostnameMismatch(target) }
        return FetchError(
            code: .certificateUntrusted,
            reason: "\(place) does not chain to a trusted CA (\(text)); if the CA is yours, add it to the trust bundle"
        )
    }
}

/// Sits behind the TLS handler and takes the leaf certificate when the handshake completes,
/// before any response byte is read: the certificate recorded is the one of this connection.
final class HandshakeObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let observation: TLSObservation

    init(observation: TLSObservation) {
        self.observation = observation
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted? = event as? TLSUserEvent,
            let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self),
            let leaf = tls.peerCertificate,
            let der = try? leaf.toDERBytes()
        {
            observation.notePeerCertificate(der)
        }
        context.fireUserInboundEventTriggered(event)
    }
}

extension FetchError {
    /// The leaf does not name the host (RFC 6125 §6) or, for an IP literal URL, the address.
    static func hostnameMismatch(_ target: PageTarget) -> FetchError {
        FetchError(
            code: .hostnameMismatch,
            reason: "the certificate of \(target.origin) is not valid for \(target.serverName ?? "its address") "
                + "(RFC 6125); the server presents another site's certificate"
        )
    }
}
