package import NIOCore

/// Facts about one LMTP connection, handed to the delivery handler with every call.
package struct LMTPSession: Sendable {
    /// The client's address, when the socket knows it.
    package var remoteAddress: SocketAddress?
    /// The argument of the client's last LHLO command (RFC 2033 §4.1): its host name or address literal.
    package var clientName: String
    /// The connection's number in this process, counting from 1: for correlating log lines.
    package var id: UInt64

    /// A session with the given facts.
    package init(remoteAddress: SocketAddress?, clientName: String, id: UInt64) {
        self.remoteAddress = remoteAddress
        self.clientName = clientName
        self.id = id
    }
}
