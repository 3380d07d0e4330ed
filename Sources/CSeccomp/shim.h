#ifndef CSECCOMP_SHIM_H
#define CSECCOMP_SHIM_H

// libseccomp, the few Linux calls the sandbox needs that Swift cannot call directly (macros,
// variadic functions, declarations hidden behind _GNU_SOURCE in the toolchain's Glibc module),
// and the worker's fault handler. C has one namespace: everything here is prefixed `csandbox_`.

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <linux/types.h>
#include <seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

// MARK: - libseccomp macros

/// `SCMP_ACT_ERRNO(x)`: fail the call with `error` instead of running it.
static inline uint32_t csandbox_act_errno(uint16_t error) { return SCMP_ACT_ERRNO(error); }
static inline uint32_t csandbox_act_kill_process(void) { return SCMP_ACT_KILL_PROCESS; }
static inline uint32_t csandbox_act_allow(void) { return SCMP_ACT_ALLOW; }

// MARK: - prctl and rlimits (prctl is variadic; setrlimit's resource type is an enum in glibc)

static inline int csandbox_set_no_new_privs(void) { return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); }
static inline int csandbox_get_no_new_privs(void) { return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); }
static inline int csandbox_set_parent_death_signal(int signal) { return prctl(PR_SET_PDEATHSIG, signal, 0, 0, 0); }
static inline int csandbox_get_seccomp_mode(void) { return prctl(PR_GET_SECCOMP, 0, 0, 0, 0); }

/// Sets both the soft and the hard limit of `resource` (an `RLIMIT_*` value) to `soft` and `hard`.
static inline int csandbox_set_rlimit(int resource, uint64_t soft, uint64_t hard) {
    struct rlimit limit = { .rlim_cur = (rlim_t)soft, .rlim_max = (rlim_t)hard };
    return setrlimit((__rlimit_resource_t)resource, &limit);
}

static inline int csandbox_get_rlimit(int resource, uint64_t *soft, uint64_t *hard) {
    struct rlimit limit;
    int result = getrlimit((__rlimit_resource_t)resource, &limit);
    if (result == 0) { *soft = limit.rlim_cur; *hard = limit.rlim_max; }
    return result;
}

static inline uint64_t csandbox_rlim_infinity(void) { return (uint64_t)RLIM_INFINITY; }

// MARK: - System calls behind _GNU_SOURCE or without a glibc wrapper

static inline int csandbox_pipe2(int fds[2], int flags) { return (int)syscall(SYS_pipe2, fds, flags); }
static inline int csandbox_close_range(unsigned int first, unsigned int last, unsigned int flags) {
    return (int)syscall(SYS_close_range, first, last, flags);
}
static inline int csandbox_unshare(int flags) { return (int)syscall(SYS_unshare, flags); }
/// CLONE_NEWNET and CLONE_NEWUSER (<sched.h> hides them behind _GNU_SOURCE).
static const int csandbox_clone_newnet = 0x40000000;
static const int csandbox_clone_newuser = 0x10000000;
static inline int csandbox_set_flags(int fd, int flags) { return fcntl(fd, F_SETFL, flags); }
static inline int csandbox_get_flags(int fd) { return fcntl(fd, F_GETFL); }
static inline int csandbox_dup_cloexec_above(int fd, int minimum) { return fcntl(fd, F_DUPFD_CLOEXEC, minimum); }
/// F_SETPIPE_SZ (Linux 2.6.35, fcntl(2)): 1031, declared by glibc only under _GNU_SOURCE.
static inline int csandbox_set_pipe_size(int fd, int size) { return fcntl(fd, 1031, size); }
/// F_GETPIPE_SZ (1032): the pipe's capacity in bytes.
static inline int csandbox_get_pipe_size(int fd) { return fcntl(fd, 1032); }

/// sched_setaffinity(2) and sched_getaffinity(2) by system call, with the mask as `words` unsigned longs
/// (cpu_set_t and its macros hide behind _GNU_SOURCE). `pid` 0 is the calling thread. The get call returns
/// the bytes it filled, or -1.
static inline int csandbox_set_affinity(pid_t pid, const unsigned long *mask, size_t words) {
    return (int)syscall(SYS_sched_setaffinity, pid, words * sizeof(unsigned long), mask);
}
static inline int csandbox_get_affinity(pid_t pid, unsigned long *mask, size_t words) {
    return (int)syscall(SYS_sched_getaffinity, pid, words * sizeof(unsigned long), mask);
}

/// vmsplice(2) into a pipe without SPLICE_F_GIFT: the pipe refers to the caller's pages instead of a
/// copy of them, so the caller must leave those bytes unchanged (and allocated) until the reader has
/// read them. SPLICE_F_NONBLOCK (2): vmsplice ignores the pipe's O_NONBLOCK, and a full pipe must give
/// EAGAIN, not block the caller. The gateway side only; the worker's filter does not allow it and the
/// worker never calls it.
static inline ssize_t csandbox_vmsplice(int fd, const struct iovec *vectors, unsigned long count) {
    return (ssize_t)syscall(SYS_vmsplice, fd, vectors, count, 2U);
}

/// Keeps the worker's freed memory for its next document (mallopt(3); no system call): blocks up
/// to `mmap_threshold` bytes come from the heap, and the heap's free top is given back to the
/// kernel only beyond `trim_threshold` bytes. Returns 1 when glibc took both.
static inline int csandbox_keep_heap(int mmap_threshold, int trim_threshold) {
    return mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 && mallopt(M_TRIM_THRESHOLD, trim_threshold) == 1;
}

/// Declared by glibc only under _GNU_SOURCE (or not seen through the toolchain's Glibc module).
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int pthread_setname_np(pthread_t thread, const char *name);

/// Closes every fd from `from` up in the child, before exec (glibc 2.34+).
static inline int csandbox_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

/// An anonymous file in memory for a worker's document window (memfd_create(2): close-on-exec, sealable); -1 with
/// errno set where the kernel has none.
static inline int csandbox_memfd_create(const char *name) {
    return (int)syscall(SYS_memfd_create, name, 0x0001U /* MFD_CLOEXEC */ | 0x0002U /* MFD_ALLOW_SEALING */);
}

/// Seals a memfd so that no one can map it writable from now on, write to it, or change its size (F_SEAL_FUTURE_WRITE,
/// Linux 5.1; F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL): mappings made before, the gateway's, stay writable.
static inline int csandbox_seal_against_writers(int fd) {
    return fcntl(fd, 1033 /* F_ADD_SEALS */, 0x0010 /* FUTURE_WRITE */ | 0x0002 | 0x0004 | 0x0001);
}

static inline int csandbox_set_thread_name(pthread_t thread, const char *name) {
    return pthread_setname_np(thread, name);
}

// MARK: - Landlock (linux/landlock.h on Debian 12 knows ABI <= 2; these are the ABI 6 structures)

/// `struct landlock_ruleset_attr` as of ABI 6: the kernel reads only the first `size` bytes passed
/// to `landlock_create_ruleset`, so older kernels get a prefix (8 bytes for ABI 1-3, 16 for ABI 4-5).
struct csandbox_landlock_ruleset_attr {
    __u64 handled_access_fs;
    __u64 handled_access_net;
    __u64 scoped;
};

#define CSANDBOX_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)

static inline long csandbox_landlock_abi_version(void) {
    return syscall(444 /* landlock_create_ruleset */, NULL, 0, CSANDBOX_LANDLOCK_CREATE_RULESET_VERSION);
}

static inline int csandbox_landlock_create_ruleset(const struct csandbox_landlock_ruleset_attr *attr, size_t size) {
    return (int)syscall(444 /* landlock_create_ruleset */, attr, size, 0);
}

static inline int csandbox_landlock_restrict_self(int ruleset, unsigned int flags) {
    return (int)syscall(446 /* landlock_restrict_self */, ruleset, flags);
}

// MARK: - For the test-only probe worker (Swift marks fork() unavailable)

/// `fork()` through the raw system call, so the probe sees the filter's verdict on `clone` itself.
static inline long csandbox_raw_fork(void) { return syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0); }

// MARK: - The worker's fault handler

/// Set by the handler's installer: what the worker exits with when it faults because its address
/// space limit is exhausted, and how large a mapping proves it is not.
static int csandbox_memory_limit_exit_code = 71;
static size_t csandbox_memory_probe_bytes = 1 << 20;

/// Runs on the alternate signal stack when the worker faults (SIGSEGV, SIGBUS, SIGILL, SIGABRT,
/// SIGTRAP, SIGFPE). Async-signal-safe: only mmap, munmap, write and _exit. If a mapping of
/// `csandbox_memory_probe_bytes` (an eighth of the limit) cannot be made, the address space limit
/// (RLIMIT_AS) is what brought the worker down (a failed allocation, or a stack that could not
/// grow): say so and exit with the agreed code. Otherwise return: SA_RESETHAND has restored the
/// default action, so the fault recurs (or abort re-raises) and the worker dies of its signal.
static void csandbox_fault_handler(int signal) {
    (void)signal;
    void *probe = mmap(NULL, csandbox_memory_probe_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (probe == MAP_FAILED) {
        static const char message[] = "gateway-worker: address space limit reached\n";
        ssize_t ignored = write(2, message, sizeof message - 1);
        (void)ignored;
        _exit(csandbox_memory_limit_exit_code);
    }
    munmap(probe, csandbox_memory_probe_bytes);
}

/// Installs `csandbox_fault_handler` on an alternate stack of `stack_size` bytes (mapped here, never
/// freed: it lives as long as the worker). Returns 0, or -1 with errno set.
static inline int csandbox_install_fault_handler(int memory_limit_exit_code, size_t probe_bytes, size_t stack_size) {
    csandbox_memory_limit_exit_code = memory_limit_exit_code;
    csandbox_memory_probe_bytes = probe_bytes;
    void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stack == MAP_FAILED) return -1;
    stack_t alternate = { .ss_sp = stack, .ss_flags = 0, .ss_size = stack_size };
    if (sigaltstack(&alternate, NULL) != 0) return -1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = csandbox_fault_handler;
    action.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    const int signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGTRAP, SIGFPE };
    for (unsigned i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        if (sigaction(signals[i], &action, NULL) != 0) return -1;
    }
    return 0;
}

#endif
