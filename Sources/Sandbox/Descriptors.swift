internal import CSeccomp
internal import Glibc
internal import Synchronization

/// The pipes the pool opens in the gateway: created close-on-exec, closed once, and counted, so a
/// test can prove that starting, killing and replacing workers leaks no descriptor.
enum Descriptors {
    /// Pipe ends the pool holds open right now, across all pools.
    static let openCount = Atomic<Int>(0)

    /// A new pipe with O_CLOEXEC (and `flags`), both ends above fd 2 so that `dup2` onto 0-2 in a
    /// child always clears close-on-exec; nil with errno set on failure.
    static func pipe(flags: Int32 = 0) -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [-1, -1]
        guard csandbox_pipe2(&fds, O_CLOEXEC | flags) == 0 else { return nil }
        for index in 0..<2 where fds[index] < 3 {
            let moved = csandbox_dup_cloexec_above(fds[index], 3)
            Glibc.close(fds[index])
            fds[index] = moved
        }
        guard fds[0] >= 3, fds[1] >= 3 else {
            for fd in fds where fd >= 0 { Glibc.close(fd) }
            return nil
        }
        openCount.add(2, ordering: .relaxed)
        return (fds[0], fds[1])
    }

    /// Closes a pipe end this enum opened; negative fds (already closed) are ignored.
    static func close(_ fd: Int32) {
        guard fd >= 0 else { return }
        Glibc.close(fd)
        openCount.subtract(1, ordering: .relaxed)
    }
}
