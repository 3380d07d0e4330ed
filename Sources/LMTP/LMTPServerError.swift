/// Why the LMTP listener could not run.
package struct LMTPServerError: Error, Sendable, CustomStringConvertible {
    /// Stable: codes appear in logs.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let description: String
        private init(_ code: String) { description = code }
        /// The listening socket could not be bound (address in use, no permission, unknown host).
        package static let cannotBind = Code("lmtp.cannot-bind")
        /// The configuration cannot work (a limit below 1, a port out of range).
        package static let invalidConfiguration = Code("lmtp.invalid-configuration")
    }

    package var code: Code
    /// What was wrong, where, and what to do.
    package var reason: String
    package var description: String { "\(code): \(reason)" }

    static func cannotBind(host: String, port: Int, underlying: any Error) -> LMTPServerError {
        LMTPServerError(
            code: .cannotBind,
            reason: "cannot listen on \(host):\(port) (\(underlying)); choose a free port or stop the other listener")
    }

    static func cannotBind(socketPath: String, underlying: any Error) -> LMTPServerError {
        LMTPServerError(
            code: .cannotBind,
            reason: "cannot listen on the Unix socket \(socketPath) (\(underlying)); check that its directory exists "
                + "and is writable, and that no other program's file is at that path")
    }

    static func invalidConfiguration(_ what: String) -> LMTPServerError {
        LMTPServerError(code: .invalidConfiguration, reason: what)
    }
}
