internal import CSeccomp
internal import Glibc

/// What a worker does to itself before it reads its first document: no new privileges, resource
/// limits, a fresh network namespace and a Landlock domain where the kernel allows, then a seccomp
/// filter that leaves only what reading a pipe, computing and writing an answer need
/// (`SyscallPolicy`). Nothing here can be undone by the process afterwards.
///
/// The order matters: unshare and Landlock need system calls the filter forbids, the filter is built
/// (which allocates) before the address space limit, and it is loaded last.
package enum Confinement {
    /// How tightly to confine a worker. Sent by the gateway in the worker's setup frame.
    package struct Configuration: Codable, Sendable, Hashable {
        /// `RLIMIT_AS`: the worker's whole address space (libraries, stack, heap). A document that
        /// needs more gets `sandbox.memory-limit`.
        package var addressSpaceBytes: UInt64
        /// `RLIMIT_CPU`: CPU seconds over the worker's whole life (the limit is cumulative). The pool
        /// recycles a worker long before; per-document deadlines are the parent's job.
        package var lifetimeCPUSeconds: UInt64
        /// `RLIMIT_NOFILE`: the worker keeps fds 0, 1 and 2 and may open nothing.
        package var maxOpenFiles: UInt64
        /// Enter a fresh, empty network namespace (`unshare(CLONE_NEWNET)`, with `CLONE_NEWUSER`
        /// when not privileged). Best effort unless `requireNetworkIsolation`.
        package var isolateNetwork: Bool
        /// Enter a Landlock domain that allows no file system access, no TCP bind or connect, and
        /// (ABI 6) no signals or abstract sockets outside it. Best effort unless `requireLandlock`.
        package var useLandlock: Bool
        /// Fail instead of degrading when the network namespace cannot be made.
        package var requireNetworkIsolation: Bool
        /// Fail instead of degrading when Landlock is not available.
        package var requireLandlock: Bool
        /// Ask the kernel to SIGKILL the worker if the thread that spawned it dies.
        package var dieWithParent: Bool

        package init(
            addressSpaceBytes: UInt64 = 1 << 30, lifetimeCPUSeconds: UInt64 = 600, maxOpenFiles: UInt64 = 3,
            isolateNetwork: Bool = true, useLandlock: Bool = true, requireNetworkIsolation: Bool = false,
            requireLandlock: Bool = false, dieWithParent: Bool = true
        ) {
            self.addressSpaceBytes = addressSpaceBytes
            self.lifetimeCPUSeconds = lifetimeCPUSeconds
            self.maxOpenFiles = maxOpenFiles
            self.isolateNetwork = isolateNetwork
            self.useLandlock = useLandlock
            self.requireNetworkIsolation = requireNetworkIsolation
            self.requireLandlock = requireLandlock
            self.dieWithParent = dieWithParent
        }
    }

    /// What was applied. The gateway logs the warnings (a kernel without Landlock, a container that
    /// forbids namespaces) once, when the pool starts.
    package struct Report: Codable, Sendable, Hashable {
        package var noNewPrivileges: Bool
        /// The number of rules in the seccomp filter that was loaded.
        package var seccompRules: Int
        package var addressSpaceBytes: UInt64
        package var lifetimeCPUSeconds: UInt64
        /// "none", "net" (CLONE_NEWNET) or "user+net" (CLONE_NEWUSER | CLONE_NEWNET).
        package var networkNamespace: String
        /// The Landlock ABI version enforced, or nil.
        package var landlockABI: Int?
        /// What could not be applied, and why.
        package var warnings: [String]

        package init(
            noNewPrivileges: Bool = false, seccompRules: Int = 0, addressSpaceBytes: UInt64 = 0,
            lifetimeCPUSeconds: UInt64 = 0, networkNamespace: String = "none", landlockABI: Int? = nil,
            warnings: [String] = []
        ) {
            self.noNewPrivileges = noNewPrivileges
            self.seccompRules = seccompRules
            self.addressSpaceBytes = addressSpaceBytes
            self.lifetimeCPUSeconds = lifetimeCPUSeconds
            self.networkNamespace = networkNamespace
            self.landlockABI = landlockABI
            self.warnings = warnings
        }
    }

    /// Confines the calling process for good. It must be single-threaded (a user namespace and a
    /// seccomp filter without TSYNC both need that), with only fds 0, 1 and 2 worth keeping.
    ///
    /// - Returns: what was applied.
    /// - Throws: `ConfinementError` when a step that is never optional fails (no_new_privs, limits,
    ///   the filter), or a required one does; the process must then exit without reading input.
    package static func apply(_ configuration: Configuration) throws(ConfinementError) -> Report {
        var report = Report()

        guard csandbox_set_no_new_privs() == 0 else { throw ConfinementError(step: "prctl(PR_SET_NO_NEW_PRIVS)") }
        report.noNewPrivileges = true
        if configuration.dieWithParent, csandbox_set_parent_death_signal(SIGKILL) != 0 {
            throw ConfinementError(step: "prctl(PR_SET_PDEATHSIG)")
        }
        // Anything inherited by mistake (an fd without O_CLOEXEC in the gateway) goes now.
        guard csandbox_close_range(3, UInt32.max, 0) == 0 else { throw ConfinementError(step: "close_range(3, ~0)") }

        if configuration.isolateNetwork {
            if csandbox_unshare(csandbox_clone_newnet) == 0 {
                report.networkNamespace = "net"
            } else if csandbox_unshare(csandbox_clone_newuser | csandbox_clone_newnet) == 0 {
                report.networkNamespace = "user+net"
            } else {
                let error = ConfinementError(step: "unshare(CLONE_NEWNET)")
                if configuration.requireNetworkIsolation { throw error }
                report.warnings.append("no network namespace: \(error)")
            }
        }

        if configuration.useLandlock {
            do throws(ConfinementError) {
                report.landlockABI = try Landlock.restrictEverything()
            } catch {
                if configuration.requireLandlock { throw error }
                report.warnings.append("no Landlock: \(error)")
            }
        }

        // Build the filter while memory is plentiful; load it after the limits.
        let filter = try SeccompFilter(rules: SyscallPolicy.rules(processID: getpid()))
        report.seccompRules = filter.ruleCount

        let limits: [(Int32, UInt64, UInt64, String)] = [
            (Int32(RLIMIT_CORE.rawValue), 0, 0, "RLIMIT_CORE"),  // no core files with document content
            (Int32(RLIMIT_FSIZE.rawValue), 0, 0, "RLIMIT_FSIZE"),  // no file writes, even by mistake
            (Int32(RLIMIT_NOFILE.rawValue), configuration.maxOpenFiles, configuration.maxOpenFiles, "RLIMIT_NOFILE"),
            // SIGXCPU at the soft limit, SIGKILL a second later.
            (
                Int32(RLIMIT_CPU.rawValue), configuration.lifetimeCPUSeconds, configuration.lifetimeCPUSeconds + 1,
                "RLIMIT_CPU"
            ),
            (Int32(RLIMIT_AS.rawValue), configuration.addressSpaceBytes, configuration.addressSpaceBytes, "RLIMIT_AS"),
        ]
        for (resource, soft, hard, name) in limits where csandbox_set_rlimit(resource, soft, hard) != 0 {
            throw ConfinementError(step: "setrlimit(\(name))")
        }
        report.addressSpaceBytes = configuration.addressSpaceBytes
        report.lifetimeCPUSeconds = configuration.lifetimeCPUSeconds

        try filter.load()
        return report
    }
}

/// A confinement step that failed: which one, and the errno it failed with.
package struct ConfinementError: Error, Sendable, Hashable, CustomStringConvertible {
    package var step: String
    package var errorNumber: Int32

    init(step: String, errorNumber: Int32 = errno) {
        self.step = step
        self.errorNumber = errorNumber
    }

    package var description: String {
        "\(step) failed: \(String(cString: strerror(errorNumber))) (errno \(errorNumber))"
    }
}
