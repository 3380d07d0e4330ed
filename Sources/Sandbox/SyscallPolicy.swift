internal import CSeccomp
internal import Glibc

/// The worker's system call policy: the ONE place that says what a confined worker may ask of the
/// kernel. Everything not listed kills the process (`SCMP_ACT_KILL_PROCESS`: the worker dies of
/// SIGSYS and the document gets `sandbox.crashed`).
///
/// Found by testing: gateway-worker ran under `strace -f` after loading this filter on the whole
/// markup corpus, emails in windows-1252 (quoted-printable), KOI8-R and an unloaded charset
/// (IBM037), a 33 MB page, a million nested elements, 1.9 MB JSON-LD strings, a 5 MB attribute,
/// and answers of 30 MB; the probe worker crashed, overflowed its stack and exhausted its memory.
/// Extraction used only read, write, brk, mmap, munmap, mremap (libxml2 growing a large
/// attribute) and exit_group; the crash path adds the signal calls below. Each entry says who
/// needs it.
///
/// Deliberately absent (killed): socket and every network call, execve/execveat, fork/vfork/clone/
/// clone3 (no processes and no threads), ptrace, process_vm_*, kill of other processes, ioctl, bpf,
/// mount, keyctl, userfaultfd, perf_event_open, io_uring_*, mprotect (no executable memory, and
/// malloc needs it only for the arenas of other threads), and all file system calls but openat.
enum SyscallPolicy {
    /// What the filter does with a matching call.
    enum Action: Hashable {
        case allow
        /// Fail the call with this errno instead of running it.
        case fail(Int32)
    }

    /// A condition on one argument of the call; a rule with several conditions needs all of them.
    enum Condition: Hashable {
        /// `argument == value`.
        case equals(argument: UInt32, value: UInt64)
        /// `argument & mask == value`.
        case maskedEquals(argument: UInt32, mask: UInt64, value: UInt64)
    }

    struct Rule: Hashable {
        var name: String
        var action: Action
        var conditions: [Condition]
        /// Who needs it, and why it is safe.
        var why: String

        /// Allows `name` (when every condition holds).
        static func allow(_ name: String, when conditions: [Condition] = [], _ why: String) -> Rule {
            Rule(name: name, action: .allow, conditions: conditions, why: why)
        }

        /// Fails `name` with `error` without running it.
        static func fail(_ name: String, with error: Int32, _ why: String) -> Rule {
            Rule(name: name, action: .fail(error), conditions: [], why: why)
        }
    }

    /// The rules for a worker whose process id is `processID` (signals are allowed only to itself).
    static func rules(processID: Int32) -> [Rule] {
        let notExecutable = Condition.maskedEquals(argument: 2, mask: UInt64(PROT_EXEC), value: 0)
        let itself = UInt64(UInt32(bitPattern: processID))
        return [
            // Input and output: only the three pipes the gateway set up.
            .allow("read", when: [.equals(argument: 0, value: 0)], "the request pipe (fd 0), nothing else"),
            .allow("write", when: [.equals(argument: 0, value: 1)], "the answer pipe (fd 1)"),
            .allow(
                "write", when: [.equals(argument: 0, value: 2)],
                "stderr (fd 2): the Swift runtime's fatal-error message, the fault handler's note"),

            // Memory: malloc's heap (brk), large blocks (mmap, munmap), realloc of large blocks
            // (mremap: libxml2 growing a 5 MB attribute value). Never executable memory.
            .allow("brk", "malloc's main heap"),
            .allow("mmap", when: [notExecutable], "malloc's large blocks, the fault handler's probe; never PROT_EXEC"),
            .allow("munmap", "free of large blocks"),
            .allow("mremap", "realloc of large blocks (libxml2 buffers); cannot add PROT_EXEC"),

            // Leaving.
            .allow("exit_group", "exit at end of input, and the fault handler's _exit"),

            // The crash path: the Swift runtime reports a fatal error (futex: its lock around the
            // report), the fault handler returns, and abort() re-raises SIGABRT on itself.
            .allow("futex", "locks in the runtime's fatal-error report; only this process's memory"),
            .allow("rt_sigreturn", "return from the fault handler (SA_RESETHAND, then the fault recurs)"),
            .allow(
                "rt_sigaction", when: [.equals(argument: 0, value: UInt64(SIGABRT))],
                "abort() restores SIGABRT's default action after the fault handler returned; SIGABRT only"),
            .allow("rt_sigprocmask", "abort() unblocks SIGABRT before raising it"),
            .allow("getpid", "abort()/raise() find their own process"),
            .allow("gettid", "abort()/raise() find their own thread"),
            .allow(
                "tgkill", when: [.equals(argument: 0, value: itself)], "abort() raises SIGABRT on itself, only itself"),

            // Opening a file fails softly instead of killing: iconv opening the gconv module of a
            // charset not loaded before confinement (IBM037 in the tests) then reports an unknown
            // charset, and the part is read as UTF-8 with a warning. Nothing is opened.
            .fail("openat", with: EACCES, "refused (EACCES): glibc opens every file through openat"),
        ]
    }
}
