/// How a worker process ends, when it ends on its own. The pool reads these from `waitpid`.
package enum WorkerExitStatus {
    /// The gateway closed the request pipe: the normal end.
    package static let finished: Int32 = 0
    /// The setup frame was missing or malformed (sysexits' EX_USAGE).
    package static let badSetup: Int32 = 64
    /// A request frame broke the protocol (EX_DATAERR).
    package static let protocolError: Int32 = 65
    /// Confinement failed; the worker read no document (EX_SOFTWARE).
    package static let confinementFailed: Int32 = 70
    /// Writing to the answer pipe failed (EX_IOERR).
    package static let ioError: Int32 = 74
    /// The fault handler found the address space limit exhausted.
    package static let memoryLimit: Int32 = 86
}
