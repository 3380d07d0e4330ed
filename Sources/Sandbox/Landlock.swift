internal import CSeccomp
internal import Glibc

/// Landlock (Linux 5.13+, `Documentation/userspace-api/landlock.rst`): an unprivileged process
/// restricts itself. The worker handles every access right its kernel knows and grants none, so it
/// can open no file, bind or connect no TCP port, and (ABI 6) signal or reach no abstract socket
/// outside its own domain. Seccomp already forbids most of this; Landlock holds even if a call the
/// filter allows turned out to reach the file system.
enum Landlock {
    /// Creates and enforces a ruleset that allows nothing. Needs no_new_privs.
    ///
    /// - Returns: the ABI version enforced.
    static func restrictEverything() throws(ConfinementError) -> Int {
        let abi = csandbox_landlock_abi_version()
        guard abi >= 1 else { throw ConfinementError(step: "landlock_create_ruleset(VERSION)") }
        var attributes = csandbox_landlock_ruleset_attr()
        // ABI 1: execute … make_sym (13 rights); 2: REFER; 3: TRUNCATE; 5: IOCTL_DEV.
        var fileSystem: UInt64 = (1 << 13) - 1
        if abi >= 2 { fileSystem |= 1 << 13 }
        if abi >= 3 { fileSystem |= 1 << 14 }
        if abi >= 5 { fileSystem |= 1 << 15 }
        attributes.handled_access_fs = fileSystem
        var size = 8
        if abi >= 4 {  // BIND_TCP, CONNECT_TCP
            attributes.handled_access_net = 0b11
            size = 16
        }
        if abi >= 6 {  // ABSTRACT_UNIX_SOCKET, SIGNAL
            attributes.scoped = 0b11
            size = 24
        }
        let ruleset = csandbox_landlock_create_ruleset(&attributes, size)
        guard ruleset >= 0 else { throw ConfinementError(step: "landlock_create_ruleset") }
        defer { close(ruleset) }
        guard csandbox_landlock_restrict_self(ruleset, 0) == 0 else {
            throw ConfinementError(step: "landlock_restrict_self")
        }
        return abi
    }
}
