internal import CSeccomp
internal import Glibc

/// Which CPU each slot's thread and its worker share (`WorkerPool.Configuration.colocatesWorkers`), in a pool with
/// no more slots than CPUs.
///
/// A slot and its worker take turns: the slot writes a document and waits, the worker extracts it and waits, the slot
/// reads the answer (and, with `WorkerPool.executor`, decodes and resolves it) and writes the next. Left to itself the
/// scheduler wakes each on whichever CPU is idle, so on a quiet machine every hand-off crosses CPUs: an interrupt to
/// wake an idle CPU, and the document and the answer read from the other CPU's cache.
package enum CPUPlacement {
    /// The CPUs thread or process `id` (0: the calling thread) may run on (its affinity mask, which a cgroup's cpuset
    /// or `taskset` narrows), in ascending order; empty if the mask cannot be read.
    package static func allowedCPUs(of id: Int32 = 0) -> [Int] {
        var mask = [UInt](repeating: 0, count: maskWords)
        let filled = mask.withUnsafeMutableBufferPointer { csandbox_get_affinity(id, $0.baseAddress, maskWords) }
        guard filled > 0 else { return [] }
        let bits = UInt.bitWidth
        var cpus: [Int] = []
        for word in 0..<(Int(filled) / MemoryLayout<UInt>.size) where mask[word] != 0 {
            for bit in 0..<bits where mask[word] & (1 << UInt(bit)) != 0 { cpus.append(word * bits + bit) }
        }
        return cpus
    }

    /// The CPU for each of `slots` slots, one CPU each from `cpus` (by default the ones the calling thread may run
    /// on), in order; nil for all when colocation is off, with one CPU (there is nothing to choose), or with more
    /// slots than CPUs. Two pairs bound to one CPU cannot move when the other CPU is idle: measured with the
    /// server's default of two workers per core (`gateway-bench stream`, two alternating pairs), the markup path cost
    /// 1.14–1.20 ms of CPU per email bound against 1.04–1.08 left to the scheduler, so such a pool is not bound.
    static func plan(slots: Int, colocate: Bool, cpus: [Int] = allowedCPUs()) -> [Int?] {
        guard colocate, cpus.count > 1, slots <= cpus.count else { return Array(repeating: nil, count: slots) }
        return (0..<slots).map { cpus[$0] }
    }

    /// Binds thread or process `id` (0: the calling thread) to `cpu`; false if the system refused.
    @discardableResult
    package static func bind(_ id: Int32, to cpu: Int) -> Bool { bind(id, toAnyOf: [cpu]) }

    /// Binds thread or process `id` (0: the calling thread) to the CPUs `cpus`; false if the system refused.
    @discardableResult
    package static func bind(_ id: Int32, toAnyOf cpus: [Int]) -> Bool {
        var mask = [UInt](repeating: 0, count: maskWords)
        for cpu in cpus {
            guard cpu >= 0, cpu < maskWords * UInt.bitWidth else { return false }
            mask[cpu / UInt.bitWidth] |= 1 << UInt(cpu % UInt.bitWidth)
        }
        return mask.withUnsafeBufferPointer { csandbox_set_affinity(id, $0.baseAddress, maskWords) } == 0
    }

    /// 1,024 CPUs, the kernel's default CONFIG_NR_CPUS ceiling for a mask read.
    private static let maskWords = 1024 / UInt.bitWidth
}
