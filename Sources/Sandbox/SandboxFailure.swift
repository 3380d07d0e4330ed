/// Why a document got no graph from the sandbox: the worker overran its deadline, crashed, ran out of
/// memory or answered garbage, the document was too large, or no worker could be had. A failure
/// concerns one document only; the pool has already replaced the worker when it returns one.
///
/// Codes are stable: they appear in the decision log and API responses. Tests compare codes, never
/// the reason text.
package struct SandboxFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable code.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let description: String
        private init(_ code: String) { description = code }

        /// The worker did not answer within the document's deadline and was killed.
        package static let timeout = Code("sandbox.timeout")
        /// The worker died while extracting (a signal such as SIGSEGV, or SIGSYS for a system call
        /// its filter forbids), or exited without answering.
        package static let crashed = Code("sandbox.crashed")
        /// The worker exhausted its address space limit (`RLIMIT_AS`) and died of it.
        package static let memoryLimit = Code("sandbox.memory-limit")
        /// The worker answered something that is not a well-formed answer to this request.
        package static let protocolError = Code("sandbox.protocol-error")
        /// The document, or the graph extracted from it, is larger than the configured limit.
        package static let tooLarge = Code("sandbox.too-large")
        /// No worker could take the document: the pool is shut down, its queue is full, or a worker
        /// could not be started.
        package static let unavailable = Code("sandbox.unavailable")
        /// The caller's task was cancelled before the answer came.
        package static let cancelled = Code("sandbox.cancelled")
    }

    /// How a worker process ended, when the failure was its death.
    package enum Termination: Sendable, Hashable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal killed it (`SIGSYS` = 31 for a forbidden system call, `SIGKILL` = 9, ...).
        case signaled(Int32)

        package var description: String {
            switch self {
            case .exited(let status): "exited with status \(status)"
            case .signaled(let signal): "killed by \(SandboxFailure.signalName(signal))"
            }
        }
    }

    package var code: Code
    /// What happened, to which worker, and what to do. Never carries document content.
    package var reason: String
    /// How the worker ended, for failures that are its death (crashed, memory-limit, timeout).
    package var termination: Termination?

    package init(code: Code, reason: String, termination: Termination? = nil) {
        self.code = code
        self.reason = reason
        self.termination = termination
    }

    package var description: String { "\(code): \(reason)" }

    /// The conventional name of a signal, for reasons and logs.
    static func signalName(_ signal: Int32) -> String {
        let names: [Int32: String] = [
            1: "SIGHUP", 2: "SIGINT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
            9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 24: "SIGXCPU",
            25: "SIGXFSZ", 31: "SIGSYS",
        ]
        return names[signal] ?? "signal \(signal)"
    }
}
