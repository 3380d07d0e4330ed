internal import CSeccomp
internal import Glibc

/// The worker's system call policy: the ONE place that says what a confined worker may ask of the
/// kernel. Everything not listed kills the process (`SCMP_ACT_KILL_PROCESS`, the worker dies of
/// SIGSYS and the document gets `sandbox.crashed`).
///
/// Found by testing: the worker parsed the corpus (HTML through libxml2, JSON-LD, MIME with iconv)
/// and encoded its graphs with Foundation's JSONEncoder under `strace -f` and under this filter;
/// each entry says who needs it. A worker reads its request from fd 0, computes, and writes its
/// answer to fd 1; fd 2 carries the Swift runtime's fatal-error message and the fault handler's note.
///
/// Deliberately absent (killed): socket and every network call, execve/execveat, fork/vfork/clone/
/// clone3 (no processes and no threads), ptrace, process_vm_*, kill of other processes, ioctl, bpf,
/// mount, keyctl, userfaultfd, perf_event_open, io_uring_*, and all file system calls except the
/// opens below.
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
                "stderr pipe (fd 2): runtime fatal-error text, fault note"),

            // Memory: malloc (brk heap, mmap for large blocks), realloc (mremap), free (munmap,
            // madvise). Never executable memory: no mapping or re-protection with PROT_EXEC.
            .allow("brk", "malloc's main heap"),
            .allow("mmap", when: [notExecutable], "malloc's large blocks and arenas, never PROT_EXEC"),
            .allow("mprotect", when: [notExecutable], "malloc grows its heaps in place, never PROT_EXEC"),
            .allow("munmap", "free of large blocks"),
            .allow("mremap", "realloc of large blocks (Array and Data growth)"),
            .allow("madvise", "free returns pages to the kernel (MADV_DONTNEED)"),

            // Leaving, and the fault handler.
            .allow("exit_group", "the worker's exit (end of input, or the fault handler's _exit)"),
            .allow("exit", "thread exit, harmless: there is only the main thread"),
            .allow("rt_sigreturn", "return from the fault handler (SA_RESETHAND, then the fault recurs)"),
            .allow(
                "rt_sigaction", when: [.equals(argument: 0, value: UInt64(SIGABRT))],
                "abort() restores SIGABRT's default action after the fault handler returned; SIGABRT only"),
            .allow("rt_sigprocmask", "abort() unblocks SIGABRT before raising it"),
            .allow("getpid", "abort()/raise() find their own process"),
            .allow("gettid", "abort()/raise() find their own thread"),
            .allow(
                "tgkill", when: [.equals(argument: 0, value: itself)], "abort() raises SIGABRT on itself, only itself"),

            // Harmless headroom for the runtime and libraries; none reaches outside the process.
            .allow("futex", "glibc and Swift runtime locks (uncontended in one thread, but allowed)"),
            .allow("clock_gettime", "clocks (normally the vDSO, without a system call)"),
            .allow("getrandom", "Swift's SystemRandomNumberGenerator and hashing seeds"),

            // Opening files fails softly instead of killing: libraries that look for optional files
            // (iconv's gconv modules for a charset not loaded before confinement, locale data) then
            // take their fallback path. The call never runs, so nothing is opened.
            .fail("open", with: EACCES, "refused (EACCES): nothing may be opened"),
            .fail("openat", with: EACCES, "refused (EACCES): nothing may be opened"),
            .fail("openat2", with: EACCES, "refused (EACCES): nothing may be opened"),
        ]
    }
}
