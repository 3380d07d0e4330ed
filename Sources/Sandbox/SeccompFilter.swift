internal import CSeccomp
internal import Glibc

/// A libseccomp filter built from `SyscallPolicy` rules: anything not allowed kills the process,
/// and so does any call from another architecture (x32, i386 through int 0x80).
struct SeccompFilter: ~Copyable {
    private let context: scmp_filter_ctx
    let ruleCount: Int

    init(rules: [SyscallPolicy.Rule]) throws(ConfinementError) {
        guard let context = seccomp_init(csandbox_act_kill_process()) else {
            throw ConfinementError(step: "seccomp_init", errorNumber: ENOMEM)
        }
        do throws(ConfinementError) {
            try SeccompFilter.add(rules, to: context)
        } catch {
            seccomp_release(context)  // self is not initialized yet: deinit will not run
            throw error
        }
        self.context = context
        self.ruleCount = rules.count
    }

    private static func add(_ rules: [SyscallPolicy.Rule], to context: scmp_filter_ctx) throws(ConfinementError) {
        var result = seccomp_attr_set(context, SCMP_FLTATR_ACT_BADARCH, csandbox_act_kill_process())
        guard result == 0 else { throw ConfinementError(step: "seccomp_attr_set(BADARCH)", errorNumber: -result) }
        for rule in rules {
            let number = seccomp_syscall_resolve_name(rule.name)
            guard number != __NR_SCMP_ERROR else {
                throw ConfinementError(step: "seccomp_syscall_resolve_name(\(rule.name))", errorNumber: ENOSYS)
            }
            let action: UInt32
            switch rule.action {
            case .allow: action = csandbox_act_allow()
            case .fail(let error): action = csandbox_act_errno(UInt16(error))
            }
            let comparisons = rule.conditions.map { condition -> scmp_arg_cmp in
                switch condition {
                case .equals(let argument, let value):
                    scmp_arg_cmp(arg: argument, op: SCMP_CMP_EQ, datum_a: value, datum_b: 0)
                case .maskedEquals(let argument, let mask, let value):
                    scmp_arg_cmp(arg: argument, op: SCMP_CMP_MASKED_EQ, datum_a: mask, datum_b: value)
                }
            }
            result = comparisons.withUnsafeBufferPointer { buffer in
                seccomp_rule_add_array(context, action, number, UInt32(buffer.count), buffer.baseAddress)
            }
            guard result == 0 else {
                throw ConfinementError(step: "seccomp_rule_add(\(rule.name))", errorNumber: -result)
            }
        }
    }

    deinit { seccomp_release(context) }

    /// Loads the filter into the kernel for this process, for good.
    func load() throws(ConfinementError) {
        let result = seccomp_load(context)
        guard result == 0 else { throw ConfinementError(step: "seccomp_load", errorNumber: -result) }
    }
}
